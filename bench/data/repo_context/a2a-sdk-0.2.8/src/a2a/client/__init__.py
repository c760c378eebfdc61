"""Client-side components for interacting with an A2A agent."""

from a2a.client.client import A2ACardResolver, A2AClient
from a2a.client.errors import (
    A2AClientError,
    A2AClientHTTPError,
    A2AClientJSONError,
)
from a2a.client.grpc_client import A2AGrpcClient
from a2a.client.helpers import create_text_message_object


__all__ = [
    'A2ACardResolver',
    'A2AClient',
    'A2AClientError',
    'A2AClientHTTPError',
    'A2AClientJSONError',
    'A2AGrpcClient',
    'create_text_message_object',
]
