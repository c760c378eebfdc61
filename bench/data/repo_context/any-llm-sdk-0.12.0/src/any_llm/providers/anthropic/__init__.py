from .anthropic import AnthropicProvider

__all__ = ["AnthropicProvider"]
