"""Scores as Arize Phoenix span annotations, for teams that read their traces in Phoenix.

Phoenix shows evaluations as annotations on a span, posted to its REST API (`POST /v1/span_annotations`,
`{"data": [{"span_id", "name", "annotator_kind", "identifier", "result": {"label", "score",
"explanation"}, "metadata"}]}`, as its `routers/v1/annotations.py` declares them). Each evaluation
becomes one annotation on the record's anchor span (the span that carried the answer), named after the
metric, labelled with the outcome word and carrying the cause and the verdicts in its metadata. The
identifier `ragpulse` makes a resend overwrite rather than duplicate (Phoenix upserts on span, name and
identifier) and keeps ragpulse's annotations apart from a person's of the same name.

Phoenix takes the request before it has the span (the app's trace may reach it later): it retries
the insert for ten minutes. `export` only holds the annotations; the pipeline's flushes send them (on
their own threads, `held`) and confirm delivery only once Phoenix answered 2xx. 408, 429, 5xx and
connection failures are sent again for `retry_for_s`; other answers (a request it will never take)
are counted and logged at once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import Field, field_validator

from collector import __version__
from collector.exporters import explanation, score_label
from collector.exporters.endpoints import HeldResults, base_url
from collector.exporters.held import Held, HoldLimits, HoldsItems, Sent
from collector.exporters.verdicts import VerdictLimits, verdict_documents
from collector.logs import RateLimitedLog
from collector.records import RagRecord
from collector.stages import Evaluation
from evaluators.redaction import without_credentials

logger = logging.getLogger(__name__)

IDENTIFIER = "ragpulse"
_RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class PhoenixConfig(HeldResults):
    """Where Phoenix listens (`phoenix`); no endpoint = no annotations. The results held are annotations."""

    endpoint: str | None = Field(
        None,
        description="Phoenix's base URL, e.g. http://phoenix:6006 (annotations go to /v1/span_annotations "
        "under it); unset = disabled.",
    )
    max_batch_size: int = Field(100, ge=1, description="Annotations per request.")

    @field_validator("endpoint")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        hint = "give Phoenix's base URL: /v1/span_annotations is added to it"
        return base_url(value, ("/v1", "/v1/span_annotations"), hint)


def annotator_kind(evaluation: Evaluation) -> str:
    """Phoenix's LLM / CODE: the offline judge is a local model and rules, not an LLM."""
    return "CODE" if evaluation.judge == "offline" else "LLM"


def annotation(
    record: RagRecord,
    evaluation: Evaluation,
    max_explanation_chars: int = 1000,
    verdicts: VerdictLimits | None = None,
    hide_texts: bool = False,
) -> dict[str, Any]:
    """One evaluation as a Phoenix span annotation (`SpanAnnotationData`)."""
    documents, left_out = verdict_documents(
        evaluation.verdicts, verdicts or VerdictLimits(), "phoenix", hide_texts
    )
    return {
        "span_id": record.anchor_span_id,
        "name": evaluation.metric,
        "annotator_kind": annotator_kind(evaluation),
        "identifier": IDENTIFIER,
        "result": {
            "label": score_label(evaluation.outcome),
            "score": evaluation.score,
            "explanation": explanation(evaluation, hide_texts, max_explanation_chars),
        },
        "metadata": {
            "trace_id": record.trace_id,
            "cause": evaluation.cause,
            "verdicts": documents,
            "verdicts_truncated": left_out,
            "threshold": evaluation.threshold,
            "lower_is_better": evaluation.lower_is_better,
            "judge": evaluation.judge,
            "judge_model": evaluation.judge_model,
            "tokens": evaluation.tokens,
            "cost_usd": evaluation.cost_usd,
            "ragpulse_version": __version__,
        },
    }


class PhoenixAnnotationExporter(HoldsItems):
    name = "phoenix"

    def __init__(
        self, config: PhoenixConfig, verdicts: VerdictLimits | None = None, hide_texts: bool = False
    ) -> None:
        if config.endpoint is None:
            raise ValueError("the Phoenix exporter needs phoenix.endpoint")
        self.config = config
        self.verdict_limits, self.hide_texts = verdicts or VerdictLimits(), hide_texts
        self._shown = without_credentials(config.endpoint)
        self._url = f"{config.endpoint}/v1/span_annotations"
        headers = config.revealed_headers()
        headers.setdefault("User-Agent", f"ragpulse/{__version__}")
        self._client = httpx.Client(timeout=config.timeout_s, headers=headers)
        self._failed_log, self._refused_log = RateLimitedLog(interval_s=30.0), RateLimitedLog(interval_s=30.0)
        self._held: Held[dict[str, Any]] = Held(
            self._send,
            HoldLimits.of(config, config.max_batch_size),
            exporter="phoenix",
            what="annotations",
            where=f"Phoenix at {self._shown}",
            config="phoenix",
        )
        self._closed = False

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        if self._closed:
            return
        for evaluation in evaluations:
            self._held.add(
                annotation(
                    record,
                    evaluation,
                    self.config.max_explanation_chars,
                    self.verdict_limits,
                    self.hide_texts,
                )
            )

    def _send(self, batch: list[dict[str, Any]]) -> Sent:
        try:
            response = self._client.post(self._url, json={"data": batch})
        except httpx.HTTPError as exc:  # held and sent again; `Held` says for how long
            self._failed_log.log(
                logger, exc, "annotations to %s failed (%s)", self._shown, type(exc).__name__
            )
            return Sent.RETRY
        if response.is_success:
            return Sent.ACCEPTED
        if response.status_code in _RETRYABLE_STATUS:
            return Sent.RETRY
        self._refused_log.log(
            logger,
            ValueError(),
            "Phoenix at %s refused %d annotations: HTTP %d %s",
            self._shown,
            len(batch),
            response.status_code,
            response.text[:300],
        )
        return Sent.REFUSED

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return self._held.flush(timeout_s)

    def shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        if not self._held.flush(self.config.timeout_s):
            logger.warning("%d annotations not delivered to %s at shutdown", self._held.held, self._shown)
        self._client.close()
