from .base import BaseOpenAIProvider
from .openai import OpenaiProvider

__all__ = ["BaseOpenAIProvider", "OpenaiProvider"]
