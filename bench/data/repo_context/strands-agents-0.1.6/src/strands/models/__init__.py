"""SDK model providers.

This package includes an abstract base Model class along with concrete implementations for specific providers.
"""

from . import bedrock
from .bedrock import BedrockModel

__all__ = ["bedrock", "BedrockModel"]
