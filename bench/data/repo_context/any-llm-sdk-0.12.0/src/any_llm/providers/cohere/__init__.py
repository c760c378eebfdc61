from .cohere import CohereProvider

__all__ = ["CohereProvider"]
