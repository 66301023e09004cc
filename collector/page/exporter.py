"""Evaluations into the page's store: an `EvaluationExporter` like the others, so the page sees
exactly what Prometheus, the evaluation spans and the results topic see.

`export` only converts and queues (the `StoreWriter` thread writes); a record it cannot convert is
counted and logged, never raised: the page is the least important of the exporters.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from collector.exporters.verdicts import VerdictLimits, verdict_documents
from collector.logs import RateLimitedLog
from collector.page.metrics import STORE_DROPPED
from collector.page.store import StoredEvaluation, StoredPassage
from collector.page.writer import StoreWriter
from collector.records import RagRecord
from collector.stages import Evaluation
from evaluators.result import reason_holds_texts

logger = logging.getLogger(__name__)


def stored_evaluation(
    record: RagRecord,
    evaluation: Evaluation,
    evaluated_at: float,
    limits: VerdictLimits,
    hide_texts: bool = False,
) -> StoredEvaluation:
    """What the store keeps of one evaluation: the verdicts in the shape every consumer sees. With
    `hide_texts` only the reasons that hold no text stay (why a metric is unmeasured or an error)."""
    verdicts, left_out = verdict_documents(evaluation.verdicts, limits, "store", hide_texts)
    relevance = evaluation.passage_relevance
    passages = tuple(
        StoredPassage(
            node.id,
            node.score,
            None if hide_texts else node.text,
            relevance[rank] if rank < len(relevance) else None,
        )
        for rank, node in enumerate(record.nodes)
    )
    return StoredEvaluation(
        trace_id=record.trace_id,
        span_id=record.anchor_span_id,
        metric=evaluation.metric,
        outcome=evaluation.outcome.value,
        score=evaluation.score,
        evaluated_at=evaluated_at,
        threshold=evaluation.threshold,
        lower_is_better=evaluation.lower_is_better,
        reason=None if hide_texts and reason_holds_texts(evaluation.outcome) else evaluation.reason,
        cause=evaluation.cause,
        judge=evaluation.judge,
        judge_model=evaluation.judge_model,
        duration_s=evaluation.duration_s,
        tokens=evaluation.tokens,
        cost_usd=evaluation.cost_usd,
        verdicts=tuple(verdicts),
        verdicts_truncated=left_out,
        service=record.service,
        route=record.route,
        model=record.model,
        service_version=record.service_version,
        prompt_version=record.prompt_version,
        offline_outcome=None if evaluation.offline_outcome is None else evaluation.offline_outcome.value,
        question=None if hide_texts else record.query,
        answer=None if hide_texts else record.response,
        passages=passages,
        conversation_id=record.conversation_id,
        convention=record.convention,
        ended_at=record.end_time_unix_nano / 1e9 if record.end_time_unix_nano else None,
        expected_output=None if hide_texts else record.expected_output,
        baseline_output=None if hide_texts else record.baseline_output,
        reference_contexts=() if hide_texts else record.reference_contexts,
        reference_context_ids=record.reference_context_ids,
    )


class StoreExporter:
    name = "store"

    def __init__(
        self,
        writer: StoreWriter,
        verdicts: VerdictLimits | None = None,
        hide_texts: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._writer, self._limits, self._hide_texts = writer, verdicts or VerdictLimits(), hide_texts
        self._clock = clock
        self._closed = False
        self._invalid = RateLimitedLog(interval_s=30.0)

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        if self._closed:
            return
        try:
            now = self._clock()
            rows = [stored_evaluation(record, e, now, self._limits, self._hide_texts) for e in evaluations]
        except Exception as exc:  # a malformed record must not reach the pipeline as an exporter failure
            STORE_DROPPED.labels("invalid").inc(len(evaluations))
            self._invalid.log(
                logger, exc, "not stored for the page: trace=%s: %r", getattr(record, "trace_id", "?"), exc
            )
            return
        self._writer.submit(rows)

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return self._closed or self._writer.flush(timeout_s)

    @property
    def saturated(self) -> bool:
        """Nine tenths of `page.max_queued` wait for the writer: evaluation waits for it."""
        return self._writer.pending >= self._writer.max_queued * 0.9

    @property
    def delivering(self) -> bool:
        return True  # a local store: a slow disk shows as `saturated`

    def shutdown(self) -> None:
        """Write what is queued; the store stays open for the page until the status server stops."""
        if not self._closed:
            self._closed = True
            self._writer.flush(10.0)
