from .moonshot import MoonshotProvider

__all__ = ["MoonshotProvider"]
