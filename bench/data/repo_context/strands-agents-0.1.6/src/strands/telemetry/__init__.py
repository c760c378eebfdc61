"""Telemetry module.

This module provides metrics and tracing functionality.
"""

from .metrics import EventLoopMetrics, Trace, metrics_to_string
from .tracer import Tracer, get_tracer

__all__ = [
    "EventLoopMetrics",
    "Trace",
    "metrics_to_string",
    "Tracer",
    "get_tracer",
]
