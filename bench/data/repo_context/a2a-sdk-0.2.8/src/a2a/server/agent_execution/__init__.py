"""Components for executing agent logic within the A2A server."""

from a2a.server.agent_execution.agent_executor import AgentExecutor
from a2a.server.agent_execution.context import RequestContext
from a2a.server.agent_execution.request_context_builder import (
    RequestContextBuilder,
)
from a2a.server.agent_execution.simple_request_context_builder import (
    SimpleRequestContextBuilder,
)


__all__ = [
    'AgentExecutor',
    'RequestContext',
    'RequestContextBuilder',
    'SimpleRequestContextBuilder',
]
