"""Results are values: a metric never raises out of `evaluate`, it returns one of four outcomes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, field_validator

from evaluators.judges.base import Usage


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # the judge failed (after retries and one repair) or something unexpected broke
    UNMEASURED = "unmeasured"  # the score is undefined for this case (e.g. no claims, missing field)


def reason_holds_texts(outcome: Outcome | str) -> bool:
    """Whether a result's reason may quote the question, the answer or the passages, by where it comes
    from. A passed or failed result's reason is the judge's account of its verdicts (it names claims
    and statements); an error's may echo what the judge endpoint replied. An unmeasured result's reason
    says why there is no score in ragpulse's own words (a missing field, nothing to score; an LLM
    judge's undecided words are replaced: `metrics.base.undecided`), so `hide_texts` keeps it: without
    it a person cannot tell why a metric was not measured."""
    return Outcome(outcome) is not Outcome.UNMEASURED


# The verdict of an item the judge's reply held no verdict for: shown with the others, never counted
# (it keeps the check that was asked, so a passage's verdict stays at the passage's position).
UNJUDGED = Outcome.UNMEASURED.value

# What each verdict means, by the question asked (`check`): the words a person reads on the page, on
# evaluation spans and in the results topic.
_LABELS: dict[str, dict[str, str]] = {
    "supported": {"yes": "supported", "no": "contradicted", "idk": "not_found"},
    "supported_by_expected": {"yes": "supported", "no": "contradicted", "idk": "not_found"},
    "supported_by_answer": {"yes": "supported", "no": "contradicted", "idk": "not_found"},
    "contradicted": {"yes": "contradicted", "no": "supported", "idk": "not_found"},
    "contradicted_by_answer": {"yes": "contradicted", "no": "consistent", "idk": "not_addressed"},
    "relevant": {"yes": "relevant", "no": "irrelevant", "idk": "partly_relevant"},
    "useful": {"yes": "useful", "no": "not_useful", "idk": "not_useful"},
    "entails_reference_claim": {"yes": "relevant", "no": "irrelevant"},
    "in_context": {"yes": "found", "no": "missing"},
    "refuses": {"yes": "refused", "no": "answered"},
    "answerable": {"yes": "answer_in_context", "no": "answer_not_in_context"},
    "biased": {"yes": "biased", "no": "not_biased"},
    "toxic": {"yes": "toxic", "no": "not_toxic"},
    "multimodal_supported": {"yes": "supported", "no": "unsupported", "idk": "unsupported"},
    "multimodal_relevant": {"yes": "in_line", "no": "not_in_line", "idk": "not_in_line"},
}


class VerdictRecord(BaseModel):
    """One judged item, kept so a person can see why a score is what it is."""

    kind: str  # claim, statement, node, context, entity, question, vote
    item: str
    verdict: str  # yes / no / idk, or a label such as tp / fp / fn
    reason: str = ""
    # The references that decide the verdict, 0-based: the supporting ones for a supported claim, the
    # contradicting ones for a contradicted claim.
    supporting_ids: list[int] = Field(default_factory=list)
    check: str = ""  # which question was asked of the item (supported, relevant, ...)
    source_ids: list[int] = Field(default_factory=list)  # passages the item was taken from (statements)
    confidence: float | None = None  # the judge's calibrated P(verdict), when it knows it (offline judge)

    @property
    def probability_yes(self) -> float | None:
        """P('yes') from the calibrated confidence: what the cascade's band is about."""
        if self.confidence is None:
            return None
        return self.confidence if self.verdict == "yes" else 1.0 - self.confidence

    @property
    def label(self) -> str:
        """The verdict in words: supported / not_found / contradicted for a claim, relevant / irrelevant
        for a statement, ...; the raw verdict where the check has no words of its own."""
        return _LABELS.get(self.check, {}).get(self.verdict, self.verdict)


# Checks whose references were passages (the multi-modal one: text and image passages together).
_DECIDED_BY_PASSAGES = frozenset({"supported", "contradicted", "multimodal_supported"})
_ARE_PASSAGES = frozenset(
    {("node", "useful"), ("node", "entails_reference_claim"), ("context", "contradicted_by_answer")}
)


def verdict_passages(verdicts: Sequence[VerdictRecord]) -> list[list[int]]:
    """For each verdict of one metric, the 0-based retrieved passages it is about: the passages that
    decide a claim (supporting or contradicting), the passage a statement came from, or the passage a
    passage verdict judges (those come in passage order, so their position among the verdicts of their
    kind is the passage's index)."""
    positions: dict[str, int] = {}
    passages: list[list[int]] = []
    for verdict in verdicts:
        position = positions.get(verdict.kind, 0)
        positions[verdict.kind] = position + 1
        if (verdict.kind, verdict.check) in _ARE_PASSAGES:
            passages.append([position])
        elif verdict.kind == "statement" and verdict.source_ids:
            passages.append(list(verdict.source_ids))
        elif verdict.check in _DECIDED_BY_PASSAGES:
            passages.append(list(verdict.supporting_ids))
        else:
            passages.append([])
    return passages


def at_passage_positions(
    verdicts: Sequence[VerdictRecord], kept: Sequence[int], left_out: Sequence[int], placeholder: str
) -> list[VerdictRecord]:
    """Verdicts made on a subset of the passages (`kept`: their positions in the full list) restated
    against the full list, so `verdict_passages` stays right: passage ids are mapped back, and each
    passage left out (`left_out`) gets a `placeholder` verdict at its position among the passage
    verdicts, which judges nothing (its check is "not_read")."""

    def back(ids: list[int]) -> list[int]:
        return [kept[i] if i < len(kept) else i for i in ids]

    out: list[VerdictRecord] = []
    emitted: dict[str, int] = {}  # passage verdicts per kind so far, placeholders included
    for verdict in verdicts:
        if (verdict.kind, verdict.check) in _ARE_PASSAGES:
            position = emitted.get(verdict.kind, 0)
            while position in left_out:
                out.append(
                    VerdictRecord(
                        kind=verdict.kind, item="", verdict="idk", reason=placeholder, check="not_read"
                    )
                )
                position += 1
            emitted[verdict.kind] = position + 1
        elif verdict.kind == "statement" and verdict.source_ids:
            verdict = verdict.model_copy(update={"source_ids": back(verdict.source_ids)})
        elif verdict.check in _DECIDED_BY_PASSAGES:
            verdict = verdict.model_copy(update={"supporting_ids": back(verdict.supporting_ids)})
        out.append(verdict)
    for kind, position in emitted.items():
        out.extend(
            VerdictRecord(kind=kind, item="", verdict="idk", reason=placeholder, check="not_read")
            for _ in (p for p in left_out if p >= position)
        )
    return out


class MetricResult(BaseModel):
    """`score` is None exactly when the outcome is error or unmeasured: never NaN."""

    name: str
    outcome: Outcome
    score: float | None = None
    passed: bool | None = None
    threshold: float
    lower_is_better: bool = False
    reason: str = ""
    verdicts: list[VerdictRecord] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    duration_s: float = 0.0

    @field_validator("score")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("a score must be a finite number")
        return value

    @property
    def success(self) -> bool:
        return self.outcome is Outcome.PASSED


class CaseResult(BaseModel):
    case_id: str
    results: list[MetricResult]
    usage: Usage = Field(default_factory=Usage)
    duration_s: float = 0.0

    def by_name(self) -> dict[str, MetricResult]:
        return {result.name: result for result in self.results}


class MetricSummary(BaseModel):
    """Aggregate of one metric over the cases. pass_rate = passed / (passed + failed + error)."""

    name: str
    lower_is_better: bool = False
    mean: float | None = None
    pass_rate: float | None = None
    counts: dict[Outcome, int] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)


class EvaluationResult(BaseModel):
    cases: list[CaseResult]
    metrics: list[MetricSummary]
    ragas_score: float | None = None  # harmonic mean of the metric means (lower-is-better as 1 - mean)
    usage: Usage = Field(default_factory=Usage)
    judge: dict[str, str] = Field(default_factory=dict)

    def summary(self, name: str) -> MetricSummary:
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(name)
