from .huggingface import HuggingfaceProvider

__all__ = ["HuggingfaceProvider"]
