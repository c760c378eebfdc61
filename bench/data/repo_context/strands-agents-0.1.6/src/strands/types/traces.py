"""Tracing type definitions for the SDK."""

from typing import List, Union

AttributeValue = Union[str, bool, float, int, List[str], List[bool], List[float], List[int]]
