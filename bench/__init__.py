"""Benchmarks: speed, latency and quality; each command ends its output with one JSON line."""
