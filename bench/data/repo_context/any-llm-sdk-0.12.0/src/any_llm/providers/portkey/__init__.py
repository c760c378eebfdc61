from .portkey import PortkeyProvider

__all__ = ["PortkeyProvider"]
