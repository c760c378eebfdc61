from .cerebras import CerebrasProvider

__all__ = ["CerebrasProvider"]
