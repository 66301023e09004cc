"""What the page's store keeps of one evaluation: `StoredEvaluation`, from this process's export
(`exporter.stored_evaluation`) or from the results topic (`results_reader.stored_from_document`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class StoredPassage:
    id: str
    score: float | None = None
    text: str | None = None
    relevance: str | None = None  # relevant / irrelevant / None: not judged


@dataclass(frozen=True, slots=True)
class StoredEvaluation:
    """One metric's result with its record, from this process's export or from the results topic."""

    trace_id: str
    span_id: str
    metric: str
    outcome: str
    score: float | None
    evaluated_at: float  # unix seconds
    threshold: float | None = None
    lower_is_better: bool = False
    reason: str | None = None
    cause: str | None = None
    judge: str = ""
    judge_model: str = ""
    duration_s: float = 0.0
    tokens: int = 0  # what the judge spent on this metric (never the app's own usage)
    cost_usd: float = 0.0
    verdicts: tuple[dict[str, Any], ...] = ()  # `collector.exporters.verdicts.verdict_documents`
    verdicts_truncated: int = 0
    service: str = ""
    route: str = ""
    model: str = ""
    service_version: str = ""  # the app's `service.version` ("" when it sent none)
    prompt_version: str = ""
    question: str | None = None
    answer: str | None = None
    passages: tuple[StoredPassage, ...] | None = None  # None: not known (an older results document)
    conversation_id: str = ""  # session.id / gen_ai.conversation.id ("" when the app sent none)
    convention: str = ""  # the instrumentation the record was read from (openinference, genai, ...)
    ended_at: float | None = None  # unix seconds the answering span ended; None: not known
    # what the reference metrics read (`ragpulse export-cases` carries them into test cases)
    expected_output: str | None = None
    baseline_output: str | None = None
    reference_contexts: tuple[str, ...] = ()
    reference_context_ids: tuple[str, ...] = ()
    offline_outcome: str | None = None  # the cascade's offline outcome, when the LLM judge re-scored it


def contradicted_passages(verdicts: Sequence[dict[str, Any]]) -> set[int]:
    """Indexes of the passages that decide a contradicted claim (the knowledge-base hotspots)."""
    return {
        int(index)
        for verdict in verdicts
        if verdict.get("kind") == "claim" and verdict.get("verdict") == "contradicted"
        for index in verdict.get("passages") or ()
    }
