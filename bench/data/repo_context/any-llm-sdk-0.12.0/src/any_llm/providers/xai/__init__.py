from .xai import XaiProvider

__all__ = ["XaiProvider"]
