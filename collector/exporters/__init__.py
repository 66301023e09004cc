"""Exporters (sinks): where evaluations go once judged (`EvaluationExporter` in `collector.stages`).

`prometheus` (scores and outcomes, exemplars = trace ids), `otel_spans` (evaluation spans in the
evaluated trace), `kafka_results` (JSON documents on a topic) and `phoenix` (span annotations for
Arize Phoenix). None blocks the pipeline: the Prometheus one only updates memory, the others send
from their own threads. Every exporter speaks the same words: the outcome (`score_label`) and, with
`hide_texts`, the same text-free explanation (`explanation`).
"""

from __future__ import annotations

from collections import Counter

from collector.stages import Evaluation, Outcome
from evaluators.result import reason_holds_texts

__all__ = ["explanation", "score_label", "text_free_summary"]


def score_label(outcome: Outcome) -> str:
    """The label of an evaluation everywhere (`gen_ai.evaluation.score.label`, the results topic's
    `outcome`, Prometheus' `outcome`, Phoenix's label): passed, failed, error or unmeasured."""
    return outcome.value


def _plural(kind: str) -> str:
    return kind[:-1] + "ies" if kind.endswith("y") else kind + "s"


def text_free_summary(evaluation: Evaluation) -> str:
    """What the verdicts say, without a word of the question, answer, passages or judge's reasons:
    "5 claims: 2 supported, 2 not_found, 1 contradicted; cause: contradicted_claim"."""
    counts: dict[str, Counter[str]] = {}
    for verdict in evaluation.verdicts:
        counts.setdefault(verdict.kind, Counter())[verdict.label] += 1
    parts = []
    for kind, labels in counts.items():
        total = sum(labels.values())
        words = ", ".join(f"{n} {label}" for label, n in labels.most_common())
        parts.append(f"{total} {kind if total == 1 else _plural(kind)}: {words}")
    if evaluation.cause:
        parts.append(f"cause: {evaluation.cause}")
    return "; ".join(parts) or score_label(evaluation.outcome)


def explanation(evaluation: Evaluation, hide_texts: bool, max_chars: int | None = None) -> str:
    """The judge's reason (cut at `max_chars`), or with `hide_texts` the text-free summary: a passed or
    failed result's reason quotes the answer and the passages. Why a metric is unmeasured or an error
    is ragpulse's own words and stays (`reason_holds_texts`)."""
    hidden = hide_texts and reason_holds_texts(evaluation.outcome)
    text = text_free_summary(evaluation) if hidden else evaluation.reason
    return text if max_chars is None else text[:max_chars]
