from .groq import GroqProvider

__all__ = ["GroqProvider"]
