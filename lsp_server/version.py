"""The language server's version, which it reports to clients in `initialize`."""

__version__ = "0.1.0"
