from .voyage import VoyageProvider

__all__ = ["VoyageProvider"]
