"""Exporters (sinks): where evaluations go once judged.

Modelled on the OTel SDK's `SpanExporter`: three methods, and `export` never raises for a transport
failure (it logs and counts), because one unreachable backend must not stop the pipeline or the
other exporters. Queueing and retries belong to the exporter's own machinery (e.g. the SDK's
`BatchSpanProcessor`, the Kafka producer's buffer), not to the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from collector.records import RagRecord
from collector.results import Evaluation, Outcome

__all__ = ["EvaluationExporter", "score_label"]

_LABELS = {
    Outcome.PASSED: "pass",
    Outcome.FAILED: "fail",
    Outcome.ERROR: "error",
    Outcome.UNMEASURED: "unmeasured",
}


class EvaluationExporter(Protocol):
    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        """Hand over one record's evaluations; must not raise on transport errors (log and count)."""
        ...

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        """Push out what is buffered; True when everything was delivered in time."""
        ...

    def shutdown(self) -> None:
        """Flush what is buffered and release connections; export() is a no-op afterwards."""
        ...


def score_label(outcome: Outcome) -> str:
    """The `gen_ai.evaluation.score.label` value for an outcome (pass/fail, or error/unmeasured)."""
    return _LABELS[outcome]
