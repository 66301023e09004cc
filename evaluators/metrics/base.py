"""What every metric shares: options, required fields as data, and the turn of a score into a result.

A metric subclass only implements `score_case` (ask the session's judge, count with `scores.py`);
this base applies threshold and strict mode, never lets a NaN out, and turns judge failures into
`error` results and undefined scores into `unmeasured` ones.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypedDict, Unpack, cast

from evaluators.case import CaseField, MissingFieldError, TestCase
from evaluators.judges.accounting import usage_scope
from evaluators.judges.base import Judge, JudgeError, ReplyMismatchError, Usage, Verdict
from evaluators.judges.matching import mismatch_scope, note_mismatch
from evaluators.judges.prompts import COT_REASON_RULE, instruction_overrides
from evaluators.metrics.text_only import without_images
from evaluators.metrics.unjudged import mismatch_details, mismatch_note, unjudged_record
from evaluators.result import MetricResult, Outcome, VerdictRecord
from evaluators.scores import UndefinedScoreError, passes, strict_score, verdict_ratio
from evaluators.session import JudgeSession

log = logging.getLogger("evaluators")


@dataclass(slots=True)
class Scored:
    """What `score_case` returns; `score=None` means unmeasured, with `reason` saying why."""

    score: float | None
    reason: str
    verdicts: list[VerdictRecord] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


def record(
    kind: str, item: str, verdict: Verdict, check: str = "", *, source_ids: Sequence[int] = ()
) -> VerdictRecord:
    """The verdict as a result keeps it. `source_ids` are given here rather than set on a copy
    afterwards: a pydantic `model_copy` per statement was 1% of an offline record's time. A
    placeholder for an item the judge gave no verdict for is kept as `unmeasured`."""
    if not verdict.judged:
        return unjudged_record(kind, item, check, source_ids)
    return VerdictRecord(
        kind=kind,
        item=item,
        verdict=verdict.verdict,
        reason=verdict.reason,
        supporting_ids=list(verdict.supporting_ids),
        check=check,
        source_ids=list(source_ids),
        confidence=verdict.confidence,
    )


def undecided(session: JudgeSession, verdicts: Sequence[Verdict], fallback: str) -> UndefinedScoreError:
    """Every verdict was `idk`: the result is unmeasured. The local judge's reason is ragpulse's own
    words (what it cannot judge, what to configure) and is kept; an LLM judge's may quote the question
    or the answer, and an unmeasured reason survives `hide_texts` (`reason_holds_texts`): the fixed
    `fallback` instead."""
    reason = verdicts[0].reason if verdicts and session.judge.info.judge == "offline" else ""
    return UndefinedScoreError(reason or fallback)


def listing(items: list[str], limit: int = 3) -> str:
    shown = "; ".join(f"'{item[:80]}'" for item in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def share(
    flags: list[bool],
    counted: str,
    listed: tuple[str, list[str]],
    records: list[VerdictRecord],
    details: dict[str, Any] | None = None,
) -> Scored:
    """The share of true flags, with a reason naming the count ("3 of 4 <counted>") and, after the
    label of `listed`, (some of) its items: the score and reason of every metric that counts verdicts."""
    label, items = listed
    reason = f"{sum(flags)} of {len(flags)} {counted}"
    if items:
        reason += f"; {label}: {listing(items)}"
    return Scored(verdict_ratio(flags), reason, records, {} if details is None else details)


class _NoJudge:
    """The session's judge for a metric with `needs_judge = False`. It has no operations: a metric that
    declares it needs no judge and then asks one fails loudly instead of misreporting its cost as zero."""


class MetricOptions(TypedDict, total=False):
    """The options every metric takes; subclasses add theirs and pass these through."""

    threshold: float
    strict_mode: bool
    include_reason: bool
    verbose: bool
    template: Mapping[str, str] | None
    judge: Judge | None


class Metric(ABC):
    """Base of every metric. `name` is stable snake_case; `required_inputs` is checked before judging.

    `required_fields` declares, on the class, the test-case fields a metric needs (the collector's
    sampling reads it by metric name); a metric whose needs depend on its options (G-Eval) overrides
    `required_inputs` instead.
    """

    name: str = "metric"
    lower_is_better: bool = False  # a class default; critiques set it per aspect
    required_fields: ClassVar[tuple[CaseField, ...]] = ()
    needs_embeddings: bool = False  # a class default; answer correctness sets it from its weights
    needs_judge: ClassVar[bool] = True  # False for metrics that only count (ranking against reference ids)
    judged_offline: ClassVar[bool] = True  # False where the offline judge can only say `unmeasured`
    # True for metrics that judge image passages themselves; the others never see them (`text_only`).
    reads_images: ClassVar[bool] = False
    # True for metrics about images (multi-modal): the sidecar scores them only on records with an image
    # passage; on a text-only record they would repeat faithfulness and relevancy, and alert twice.
    about_images: ClassVar[bool] = False

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        strict_mode: bool = False,
        include_reason: bool = True,
        verbose: bool = False,
        template: Mapping[str, str] | None = None,
        judge: Judge | None = None,
    ) -> None:
        self.threshold = threshold
        self.strict_mode = strict_mode
        self.include_reason = include_reason
        self.verbose = verbose
        self.template = dict(template) if template else None
        self.judge = judge

    @property
    def effective_threshold(self) -> float:
        if self.strict_mode:
            return 0.0 if self.lower_is_better else 1.0
        return self.threshold

    @abstractmethod
    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        """Ask the judge through `session` and count; raise UndefinedScoreError when nothing to count."""

    async def a_measure(
        self,
        case: TestCase | Mapping[str, Any],
        judge: Judge | None = None,
        *,
        session: JudgeSession | None = None,
    ) -> MetricResult:
        """Score one case. Raises MissingFieldError (naming the field) before any judge call."""
        case = case if isinstance(case, TestCase) else TestCase.model_validate(case)
        case.require(self.name, self.required_inputs)
        if session is None:
            chosen = judge or self.judge
            if chosen is None and self.needs_judge:
                raise ValueError(
                    f"metric {self.name!r} needs a judge: pass judge= to the metric or to a_measure"
                )
            session = JudgeSession(chosen if chosen is not None else cast(Judge, _NoJudge()))
        started = time.monotonic()
        outcome: Outcome | None
        with usage_scope() as usage, mismatch_scope() as mismatches, instruction_overrides(self.template):
            try:
                scored = await self._score(case, session)
            except ReplyMismatchError as error:  # every metric that asked for the reply counts it
                note_mismatch(error.mismatch)
                scored, outcome = Scored(None, f"judge error: {error}"), Outcome.ERROR
            except JudgeError as error:
                scored, outcome = Scored(None, f"judge error: {error}"), Outcome.ERROR
            except UndefinedScoreError as error:
                scored, outcome = Scored(None, f"unmeasured: {error}"), Outcome.UNMEASURED
            else:
                outcome = None
        if mismatches:  # the judge's replies did not line up with the items: say what was judged
            scored.details.update(mismatch_details(mismatches))
            note = mismatch_note(scored.verdicts, mismatches) if scored.score is not None else ""
            scored.reason = f"{scored.reason}; {note}" if scored.reason and note else scored.reason or note
        result = self._result(scored, outcome, usage.copy(), time.monotonic() - started)
        if self.verbose:
            log.info(
                "%s: %s score=%s reason=%s verdicts=%s",
                self.name,
                result.outcome,
                result.score,
                result.reason,
                [v.model_dump() for v in result.verdicts],
            )
        return result

    async def _score(self, case: TestCase, session: JudgeSession) -> Scored:
        """`score_case`, on the text-only view of the case unless the metric reads images."""
        view = None if self.reads_images else without_images(case)
        if view is None:
            return await self.score_case(case, session)
        try:
            view.case.require(self.name, self.required_inputs)
            scored = await self.score_case(view.case, session)
        except MissingFieldError:  # what remains after the images is nothing to score
            raise UndefinedScoreError(view.reason) from None
        scored.verdicts = view.restore(scored.verdicts)
        scored.details["image_passages_not_read"] = view.images
        if scored.reason:
            scored.reason += f" ({view.images} image passage(s) not read)"
        return scored

    def measure(self, case: TestCase | Mapping[str, Any], judge: Judge | None = None) -> MetricResult:
        """Synchronous `a_measure`, for scripts and notebooks without a running event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.a_measure(case, judge))
        raise RuntimeError("measure() cannot run inside an event loop; await a_measure() instead")

    @property
    def required_inputs(self) -> tuple[CaseField, ...]:
        """The test-case fields this metric instance needs."""
        return self.required_fields

    def outcome_result(self, outcome: Outcome, reason: str) -> MetricResult:
        """An error or unmeasured result decided outside the metric (e.g. by `evaluate`)."""
        return self._result(Scored(None, reason), outcome, Usage(), 0.0)

    def _result(self, scored: Scored, outcome: Outcome | None, usage: Usage, duration: float) -> MetricResult:
        score: float | None = None
        passed: bool | None = None
        reason = scored.reason
        if outcome is None:
            if scored.score is None:
                outcome = Outcome.UNMEASURED
            else:
                score = strict_score(scored.score, self.lower_is_better) if self.strict_mode else scored.score
                passed = passes(score, self.effective_threshold, self.lower_is_better)
                outcome = Outcome.PASSED if passed else Outcome.FAILED
                reason = scored.reason if self.include_reason else ""
        return MetricResult(
            name=self.name,
            outcome=outcome,
            score=score,
            passed=passed,
            threshold=self.effective_threshold,
            lower_is_better=self.lower_is_better,
            reason=reason,
            verdicts=scored.verdicts,
            details=scored.details,
            usage=usage,
            duration_s=duration,
        )


Reasoning = Literal["verdicts", "cot"]


class ReasonedOptions(MetricOptions, total=False):
    """The options of a metric whose verdict reasons can be chain of thought."""

    reasoning: Reasoning


class ReasonedMetric(Metric):
    """A metric that offers TruLens' chain-of-thought reasons (`*_with_cot_reasons`).

    `reasoning="cot"` makes an LLM judge quote, for each verdict, the evidence that decides it and
    explain the steps to it: reasons a person can check, at several times the completion tokens.
    It rides on the `reason` instruction override, so no judge operation changes (a `template` that
    sets `reason` itself wins). The default, "verdicts", keeps each reason to a few words; the offline
    judge ignores both, as its reasons already name the matching passage per statement.
    """

    def __init__(self, *, reasoning: Reasoning = "verdicts", **options: Unpack[MetricOptions]) -> None:
        super().__init__(**options)
        if reasoning not in ("verdicts", "cot"):
            raise ValueError("reasoning must be 'verdicts' or 'cot'")
        self.reasoning = reasoning
        if reasoning == "cot":
            self.template = {"reason": COT_REASON_RULE, **(self.template or {})}


def names_of(*family: type[Metric]) -> tuple[str, ...]:
    """The names of a family of metric classes, in the order given: the one list tables, benchmarks and
    tests iterate (`ranking.RANKING_METRICS`, `diagnostics.DIAGNOSTIC_METRICS`), read from the classes so a
    rename cannot leave it stale."""
    return tuple(cls.name for cls in family)
