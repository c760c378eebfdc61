"""A framework for building, deploying, and managing AI agents."""

from . import agent, event_loop, models, telemetry, types
from .agent.agent import Agent
from .tools.decorator import tool
from .tools.thread_pool_executor import ThreadPoolExecutorWrapper

__all__ = ["Agent", "ThreadPoolExecutorWrapper", "agent", "event_loop", "models", "tool", "types", "telemetry"]
