"""The A2A Python SDK."""
