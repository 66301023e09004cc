"""`RecordEvaluator`: the cascade, and the mapping of the evaluators' results to `Evaluation`s.

With a cascade, the offline judge scores first and only its doubtful grounding results (a
verdict whose calibrated probability lies inside the band, or an error) go to the LLM judge;
while the LLM judge's circuit is open the offline verdicts stand and the skipped escalations are
counted (`ragpulse_cascade_total{stage="escalation_skipped"}`). Metrics the offline judge cannot judge
at all (criteria, conversations) go straight to the LLM judge; with its circuit open they are left to
the offline judge, which says `unmeasured`. A multi-modal metric the offline judge left unmeasured
because the case holds images (it cannot see them) goes to the LLM judge as well: that is the judge
that can.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from collector.judging.breaker import CircuitBreaker
from collector.judging.cases import to_test_case
from collector.judging.scorers import CaseScorer
from collector.metrics import CASCADE, JUDGE_REPLY_MISMATCHES
from collector.records import RagRecord
from collector.review.fit import FittedThresholds
from collector.stages import Evaluation, Outcome, Spend
from evaluators import CaseResult, JudgeInfo, MetricResult, TestCase, failure_causes, passage_relevance
from evaluators.images import image_positions
from evaluators.judges.matching import MISMATCH_DETAIL
from evaluators.metrics.registry import judged_offline

_CASCADE_METRICS = frozenset({"faithfulness", "hallucination"})
_VISION_METRICS = frozenset({"multimodal_faithfulness", "multimodal_relevance"})


class RecordEvaluator:
    def __init__(
        self,
        first: CaseScorer,
        escalate_to: CaseScorer | None = None,
        band: tuple[float, float] = (0.25, 0.75),
        breaker: CircuitBreaker | None = None,
        thresholds: FittedThresholds | None = None,
    ) -> None:
        """`breaker` guards the LLM judge: `first` without a cascade, `escalate_to` with one;
        `thresholds`: pass thresholds fitted on reviewers' corrections, per service and metric."""
        self.first, self.escalate_to, self.band, self.breaker = first, escalate_to, band, breaker
        self.thresholds = thresholds

    @property
    def ready(self) -> bool:
        """The judge is loaded (offline) or not known to be failing (its circuit is closed)."""
        return self.breaker is None or not self.breaker.is_open

    async def evaluate(
        self, record: RagRecord, metrics: Sequence[str], case: TestCase | None = None
    ) -> tuple[list[Evaluation], Spend]:
        """`case`: the record's test case when the sampler already built it."""
        llm_allowed = self.breaker is None or self.breaker.allow(time.monotonic())
        if not llm_allowed and self.escalate_to is None:  # the only judge is failing: the caller retries
            return [], Spend()
        case = case or to_test_case(record)
        llm_only = [m for m in metrics if not judged_offline(m)] if self.escalate_to and llm_allowed else []
        results: dict[str, tuple[MetricResult, JudgeInfo]] = {}
        spend = Spend()
        if len(llm_only) < len(metrics):
            first = await self.first.score(case, [m for m in metrics if m not in llm_only])
            results = {r.name: (r, self.first.info) for r in first.results}
            spend = _spend(first)
        if self.escalate_to is not None and llm_only:
            CASCADE.labels("llm_only").inc(len(llm_only))
            direct = await self.escalate_to.score(case, llm_only)
            results.update({r.name: (r, self.escalate_to.info) for r in direct.results})
            spend = spend + _spend(direct)
        offline_outcomes: dict[str, Outcome] = {}
        if self.escalate_to is not None:
            images = bool(image_positions(case.retrieval_context))
            doubtful = [name for name, (r, _) in results.items() if self._doubtful(r, images)]
            CASCADE.labels("offline_only").inc(
                sum(n in _CASCADE_METRICS and n not in doubtful for n in results)
            )
            if doubtful and not llm_allowed:  # keep the offline verdicts; the escalation is skipped, counted
                CASCADE.labels("escalation_skipped").inc(len(doubtful))
            elif doubtful:
                CASCADE.labels("escalated").inc(len(doubtful))
                offline_outcomes = {name: Outcome(results[name][0].outcome.value) for name in doubtful}
                second = await self.escalate_to.score(case, doubtful)
                results.update({r.name: (r, self.escalate_to.info) for r in second.results})
                spend = spend + _spend(second)
        if self.thresholds is not None:  # pass thresholds refitted on reviewers' corrections
            results = {
                name: (self.thresholds.apply(record.service, info.judge, result), info)
                for name, (result, info) in results.items()
            }
        scored = [result for result, _ in results.values()]
        for result in scored:  # a judge reply that did not line up with the items (partly scored, or error)
            if MISMATCH_DETAIL in result.details:
                JUDGE_REPLY_MISMATCHES.labels(result.name).inc()
        causes = failure_causes(case, scored)
        relevance = tuple(passage_relevance(scored, len(case.retrieval_context or [])))
        evaluations = [
            _evaluation(result, info, causes.get(name), relevance, offline_outcomes.get(name))
            for name, (result, info) in results.items()
        ]
        return evaluations, spend

    def unavailable(self, metrics: Sequence[str], reason: str) -> list[Evaluation]:
        """`error` evaluations for metrics the judge never scored (its circuit stayed open)."""
        judge = self.escalate_to or self.first
        return [_evaluation(result, judge.info, None, ()) for result in judge.errors(metrics, reason)]

    def _doubtful(self, result: MetricResult, images: bool) -> bool:
        """Escalate when the offline judge is unsure of any verdict: its calibrated probability of
        'yes' falls inside the band. A verdict without a probability falls back on the score. A
        multi-modal metric on a case with images escalates when the offline judge left it unmeasured."""
        if result.name in _VISION_METRICS:
            return images and result.outcome == "unmeasured"
        if result.name not in _CASCADE_METRICS:
            return False
        if result.score is None:
            return result.outcome == "error"
        low, high = self.band
        probabilities = [v.probability_yes for v in result.verdicts]
        if probabilities and all(p is not None for p in probabilities):
            return any(low <= p <= high for p in probabilities if p is not None)
        return low <= result.score <= high

    def shutdown(self) -> None:
        self.first.shutdown()
        if self.escalate_to is not None:
            self.escalate_to.shutdown()


def _spend(result: CaseResult) -> Spend:
    return Spend(result.usage.prompt_tokens + result.usage.completion_tokens, result.usage.cost_usd)


def _evaluation(
    result: MetricResult,
    judge: JudgeInfo,
    cause: str | None,
    relevance: tuple[str | None, ...],
    offline_outcome: Outcome | None = None,
) -> Evaluation:
    return Evaluation(
        metric=sys.intern(result.name),  # one string per name, not one per result read from a worker
        outcome=Outcome(result.outcome.value),
        score=result.score,
        reason=result.reason,
        threshold=result.threshold,
        lower_is_better=result.lower_is_better,
        judge=judge.judge,
        judge_model=judge.model,
        duration_s=result.duration_s,
        cause=cause,
        passage_relevance=relevance,
        verdicts=tuple(result.verdicts),
        tokens=result.usage.prompt_tokens + result.usage.completion_tokens,
        cost_usd=result.usage.cost_usd,
        offline_outcome=offline_outcome,
    )
