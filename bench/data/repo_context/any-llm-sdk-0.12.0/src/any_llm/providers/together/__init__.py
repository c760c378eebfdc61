from .together import TogetherProvider

__all__ = ["TogetherProvider"]
