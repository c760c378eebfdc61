from .fireworks import FireworksProvider

__all__ = ["FireworksProvider"]
