from .llama import LlamaProvider

__all__ = ["LlamaProvider"]
