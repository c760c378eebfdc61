from .nebius import NebiusProvider

__all__ = ["NebiusProvider"]
