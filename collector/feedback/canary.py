"""The judge canary: re-judge a frozen golden set on a schedule and export agreement with its stored verdicts.

A drop in live scores after a judge change (a new model, a provider update) looks exactly like an app
regression. The canary tells them apart: the golden set's cases and answers never change, so when their
verdicts change, the judge did. It scores with the sidecar's own judge (the `CaseScorer` live records go
to, with its HTTP hook, so its calls count in the judge's tokens and cost), in a task of its own that
never blocks ingest, and compares with `evaluators.baseline.compare`.

Judge errors are not verdicts: they are left out of the comparison (a judge outage would otherwise look
like drift) and a run where nothing could be judged counts as `runs{outcome="error"}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from collector.errors import ConfigError
from collector.judging.evaluator import RecordEvaluator
from collector.judging.scorers import CaseScorer
from collector.metrics import (
    CANARY_AGREEMENT,
    CANARY_LAST_RUN,
    CANARY_RUNS,
    CANARY_SCORE_DRIFT,
)
from collector.pipeline.teardown import cancelled
from evaluators.baseline import compare, load_baseline
from evaluators.case import TestCase
from evaluators.dataset import load_cases
from evaluators.judges.cache import fresh_replies
from evaluators.metrics.custom import CustomMetrics
from evaluators.metrics.registry import check_known, create_metric
from evaluators.result import CaseResult, EvaluationResult, Outcome

logger = logging.getLogger(__name__)

_CONCURRENCY = 4  # cases re-judged at once: a golden set must not crowd out live evaluations


class CanaryConfig(BaseModel):
    """The `canary:` section. Off unless `cases` is set; the files are read and matched at load."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cases: Path | None = Field(
        None, description="The golden set: a .jsonl/.json/.csv of test cases (as `ragpulse eval` reads)."
    )
    baseline: Path | None = Field(
        None, description="Its stored verdicts: the `ragpulse eval --json` report of those cases."
    )
    metrics: list[str] = Field(
        default_factory=list, description="Metrics to re-judge; empty = every metric of the baseline."
    )
    interval_s: float = Field(3600.0, gt=0, description="Seconds between two runs.")
    on_start: bool = Field(True, description="Run once at start, then every interval_s.")

    @property
    def enabled(self) -> bool:
        return self.cases is not None

    @model_validator(mode="after")
    def _golden_set_matches(self) -> CanaryConfig:
        """Bad paths and a baseline of other cases fail at load (`check-config`), not at the first run."""
        if self.cases is not None or self.baseline is not None:
            self.load()
        return self

    def load(self) -> GoldenSet:
        """The cases and the baseline's verdicts for them; ValueError (one line) when they do not match."""
        if self.cases is None:
            raise ValueError("baseline is set but cases is not: the canary needs both")
        if self.baseline is None:
            raise ValueError(
                "cases is set but baseline is not: freeze its verdicts with `ragpulse eval --json`"
            )
        cases = load_cases(self.cases)  # DatasetError / BaselineError: ValueErrors naming the file
        baseline = load_baseline(self.baseline)
        return GoldenSet.matched(cases, baseline, self.metrics, self.baseline)


@dataclass(frozen=True)
class GoldenSet:
    cases: list[TestCase]
    baseline: EvaluationResult  # only the canary's metrics, judge errors left out
    metrics: tuple[str, ...]

    @classmethod
    def matched(
        cls, cases: list[TestCase], baseline: EvaluationResult, metrics: Sequence[str], path: Path
    ) -> GoldenSet:
        ids = [case.id or "" for case in cases]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"cases: case id(s) used twice: {_few(repeated)}")
        stored = {case.case_id for case in baseline.cases}
        missing, extra = [i for i in ids if i not in stored], sorted(stored - set(ids))
        if missing or extra:
            raise ValueError(
                f"{path} is not a report of these cases: {len(missing)} case(s) without stored verdicts "
                f"({_few(missing)}), {len(extra)} stored case(s) not in the cases ({_few(extra)})"
            )
        names = list(metrics) or [summary.name for summary in baseline.metrics]
        in_baseline = {r.name for case in baseline.cases for r in case.results}
        absent = [name for name in names if name not in in_baseline]
        if absent:
            raise ValueError(f"metrics {_few(absent)} have no stored verdicts in {path}")
        kept = without_errors(baseline, names)
        if not any(
            r.outcome in (Outcome.PASSED, Outcome.FAILED) for case in kept.cases for r in case.results
        ):
            raise ValueError(f"{path} holds no passed or failed verdict to compare with (errors only?)")
        return cls(cases, kept, tuple(names))


def without_errors(result: EvaluationResult, metrics: Sequence[str]) -> EvaluationResult:
    """The results of `metrics` only, judge errors left out: an error is not a verdict to agree with."""
    wanted = set(metrics)
    cases = [
        CaseResult(
            case_id=case.case_id,
            results=[r for r in case.results if r.name in wanted and r.outcome is not Outcome.ERROR],
        )
        for case in result.cases
    ]
    return EvaluationResult(cases=cases, metrics=[], judge=result.judge)


def score_drift(current: EvaluationResult, baseline: EvaluationResult) -> dict[str, float]:
    """Per metric, the mean absolute score change over the (case, metric) pairs scored in both."""
    before = {(case.case_id, r.name): r.score for case in baseline.cases for r in case.results}
    changes: dict[str, list[float]] = defaultdict(list)
    for case in current.cases:
        for result in case.results:
            old = before.get((case.case_id, result.name))
            if old is not None and result.score is not None:
                changes[result.name].append(abs(result.score - old))
    return {name: sum(values) / len(values) for name, values in changes.items()}


class Canary:
    """Runs the golden set through `scorer` every `interval_s` until told to stop."""

    def __init__(
        self,
        golden: GoldenSet,
        scorer: CaseScorer,
        config: CanaryConfig,
        ready: Callable[[], bool] = lambda: True,
    ) -> None:
        """`ready`: False while the judge's circuit is open; the run is then skipped (counted error)."""
        self.golden, self.scorer, self.config, self.ready = golden, scorer, config, ready
        self.judge, self.model = scorer.info.judge, scorer.info.model
        for outcome in ("ok", "error"):
            CANARY_RUNS.labels(outcome)

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop`: a run at start (with `on_start`), then one every interval. A run in progress
        when `stop` is set is cancelled, so the judge can be shut down behind it."""
        delay = 0.0 if self.config.on_start else self.config.interval_s
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
                return
            job = asyncio.create_task(self.run_once())
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({job, stopping}, return_when=asyncio.FIRST_COMPLETED)
            await cancelled((job, stopping), "canary tasks")
            delay = self.config.interval_s

    async def run_once(self) -> dict[str, float] | None:
        """One run: the agreement per metric, or None when nothing could be judged (counted error)."""
        if not self.ready():
            self._failed("the judge's circuit is open; run skipped")
            return None
        gate = asyncio.Semaphore(_CONCURRENCY)

        async def one(case: TestCase) -> CaseResult:
            async with gate:
                with fresh_replies():  # ask the judge now, not what it answered last hour
                    return await self.scorer.score(case, self.golden.metrics)

        try:
            scored = await asyncio.gather(*(one(case) for case in self.golden.cases))
        except Exception as error:  # a broken scorer is a failed run, never a dead task
            self._failed(f"{type(error).__name__}: {error}")
            return None
        current = without_errors(EvaluationResult(cases=list(scored), metrics=[]), self.golden.metrics)
        if not any(case.results for case in current.cases):
            reasons = [r.reason for case in scored for r in case.results if r.reason]
            self._failed(f"every case errored ({reasons[0] if reasons else 'no reason given'})")
            return None
        comparison = compare(current, self.golden.baseline)
        drift = score_drift(current, self.golden.baseline)
        agreement: dict[str, float] = {}
        for metric in self.golden.metrics:
            share = comparison.agreement(metric)
            if share is None:
                continue
            agreement[metric] = share
            CANARY_AGREEMENT.labels(metric, self.judge, self.model).set(share)
            if metric in drift:
                CANARY_SCORE_DRIFT.labels(metric, self.judge, self.model).set(drift[metric])
        CANARY_RUNS.labels("ok").inc()
        CANARY_LAST_RUN.set(time.time())
        logger.info(
            "judge canary (%s %s): %s",
            self.judge,
            self.model,
            ", ".join(f"{m} agreement {a:.0%} drift {drift.get(m, 0.0):.2f}" for m, a in agreement.items()),
        )
        return agreement

    def _failed(self, why: str) -> None:
        CANARY_RUNS.labels("error").inc()
        logger.warning("judge canary run failed: %s", why)


def build_canary(
    config: CanaryConfig,
    evaluator: RecordEvaluator,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    custom: CustomMetrics | None = None,
) -> Canary | None:
    """The canary on the live judge: the LLM judge when there is one (under a cascade too: it is the
    judge that can drift), else the offline one. None when `canary.cases` is unset."""
    if not config.enabled:
        return None
    try:
        golden = config.load()
        check_known(golden.metrics, custom)
    except ValueError as error:
        raise ConfigError(f"canary: {error}") from None
    _warn_on_other_thresholds(golden, options or {}, custom)
    scorer = evaluator.escalate_to or evaluator.first
    logger.info(
        "judge canary: %d case(s), metrics %s, every %gs",
        len(golden.cases),
        ", ".join(golden.metrics),
        config.interval_s,
    )
    return Canary(golden, scorer, config, ready=lambda: evaluator.ready)


def _warn_on_other_thresholds(
    golden: GoldenSet, options: Mapping[str, Mapping[str, Any]], custom: CustomMetrics | None
) -> None:
    """A threshold other than the baseline's flips outcomes with no judge change: say so at start."""
    stored = {r.name: r.threshold for case in golden.baseline.cases for r in case.results}
    for name in golden.metrics:
        live = create_metric(name, custom=custom, **options.get(name, {})).threshold
        if name in stored and abs(stored[name] - live) > 1e-9:
            logger.warning(
                "judge canary: %s's threshold is %g here but %g in the baseline; agreement will be off "
                "until they match",
                name,
                live,
                stored[name],
            )


def _few(items: Sequence[str], shown: int = 3) -> str:
    head = ", ".join(items[:shown])
    return head + (f", ... ({len(items) - shown} more)" if len(items) > shown else "") if items else "none"
