"""Exporters (sinks): where evaluations go once judged (`EvaluationExporter` in `collector.stages`).

`prometheus` (scores and outcomes, exemplars = trace ids), `otel_spans` (evaluation spans in the
evaluated trace) and `kafka_results` (JSON documents on a topic). None blocks the pipeline: the
Prometheus one only updates memory, the other two send from their own threads.
"""

from __future__ import annotations

from collector.stages import Outcome

__all__ = ["score_label"]

_LABELS = {
    Outcome.PASSED: "pass",
    Outcome.FAILED: "fail",
    Outcome.ERROR: "error",
    Outcome.UNMEASURED: "unmeasured",
}


def score_label(outcome: Outcome) -> str:
    """The `gen_ai.evaluation.score.label` value for an outcome (pass/fail, or error/unmeasured)."""
    return _LABELS[outcome]
