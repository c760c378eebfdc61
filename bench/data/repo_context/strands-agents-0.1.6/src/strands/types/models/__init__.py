"""Model-related type definitions for the SDK."""

from .model import Model
from .openai import OpenAIModel

__all__ = ["Model", "OpenAIModel"]
