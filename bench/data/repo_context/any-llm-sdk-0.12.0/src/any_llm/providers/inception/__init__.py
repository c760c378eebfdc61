from .inception import InceptionProvider

__all__ = ["InceptionProvider"]
