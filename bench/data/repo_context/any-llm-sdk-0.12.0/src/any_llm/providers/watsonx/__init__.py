from .watsonx import WatsonxProvider

__all__ = ["WatsonxProvider"]
