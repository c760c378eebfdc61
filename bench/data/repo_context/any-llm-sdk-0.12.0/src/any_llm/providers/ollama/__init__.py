from .ollama import OllamaProvider

__all__ = ["OllamaProvider"]
