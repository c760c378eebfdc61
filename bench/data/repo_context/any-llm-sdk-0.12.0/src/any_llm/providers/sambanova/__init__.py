from .sambanova import SambanovaProvider

__all__ = ["SambanovaProvider"]
