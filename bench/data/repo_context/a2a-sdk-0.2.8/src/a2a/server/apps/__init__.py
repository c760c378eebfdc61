"""HTTP application components for the A2A server."""

from a2a.server.apps.jsonrpc import (
    A2AFastAPIApplication,
    A2AStarletteApplication,
    CallContextBuilder,
    JSONRPCApplication,
)


__all__ = [
    'A2AFastAPIApplication',
    'A2AStarletteApplication',
    'CallContextBuilder',
    'JSONRPCApplication',
]
