"""Benchmarks: run from the project root as modules, e.g. `python -m benchmarks.pipeline`."""
