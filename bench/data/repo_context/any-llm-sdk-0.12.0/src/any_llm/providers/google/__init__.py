from .google import GoogleProvider

__all__ = ["GoogleProvider"]
