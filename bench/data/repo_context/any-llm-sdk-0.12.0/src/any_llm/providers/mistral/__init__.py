from .mistral import MistralProvider

__all__ = ["MistralProvider"]
