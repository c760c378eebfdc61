from .span_tree import SpanNode, SpanQuery, SpanTree

__all__ = (
    'SpanTree',
    'SpanNode',
    'SpanQuery',
)
