from .openrouter import OpenrouterProvider

__all__ = ["OpenrouterProvider"]
