from .deepseek import DeepseekProvider

__all__ = ["DeepseekProvider"]
