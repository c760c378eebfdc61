from .lmstudio import LmstudioProvider

__all__ = ["LmstudioProvider"]
