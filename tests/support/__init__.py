"""Helpers for tests and benchmarks, kept out of the installed packages: tiny random checkpoints
(`checkpoints`) and `dcomplete engine` as a subprocess (`engine_process`).

Imported as `tests.support` from a checkout: pytest puts the repository root on the path
(`pythonpath` in pyproject.toml) and `python -m bench.X` runs from the root.
"""
