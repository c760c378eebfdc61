"""Various handlers for performing custom actions on agent state.

Examples include:

- Processing tool invocations
- Displaying events from the event stream
"""

from .callback_handler import CompositeCallbackHandler, PrintingCallbackHandler, null_callback_handler

__all__ = ["CompositeCallbackHandler", "null_callback_handler", "PrintingCallbackHandler"]
