from any_llm.api import acompletion, aembedding, aresponses, completion, embedding, responses
from any_llm.exceptions import MissingApiKeyError
from any_llm.provider import ProviderName
from any_llm.tools import callable_to_tool, prepare_tools

__all__ = [
    "MissingApiKeyError",
    "ProviderName",
    "acompletion",
    "aembedding",
    "aresponses",
    "callable_to_tool",
    "completion",
    "embedding",
    "prepare_tools",
    "responses",
]
