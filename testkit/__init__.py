"""Helpers shared by the tests and the benchmarks (not shipped in the wheel).

Real components only: a scripted OpenAI-compatible judge server, `ragpulse run` as a subprocess or
in-process, OTLP posting, RAG traces made with the real OpenTelemetry SDK, hostile inputs.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "tests" / "data" / "instrumentation"  # what the real instrumentation libraries emit
