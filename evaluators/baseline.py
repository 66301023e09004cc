"""Compare an evaluation with an earlier one (a baseline): which metrics and which cases got worse.

The baseline is an earlier `ragpulse eval --json` report (an `EvaluationResult`). Metrics are matched by
name and cases by id, so the same dataset evaluated twice (before and after a change of prompt, model or
judge) shows per-metric movement and the exact cases that flipped. The judge canary reuses
`Comparison.agreement` to measure how often a re-judged golden set keeps its stored verdicts.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evaluators.result import EvaluationResult, MetricSummary, Outcome

ChangeKind = Literal["regression", "fixed", "changed"]


class BaselineError(ValueError):
    """The baseline file cannot be read as an evaluation report; the message is one line."""


class MetricChange(BaseModel):
    """One metric before and after. A change is now minus before; None when a side has no value."""

    model_config = ConfigDict(frozen=True)

    name: str
    lower_is_better: bool = False
    mean_before: float | None = None
    mean_now: float | None = None
    pass_rate_before: float | None = None
    pass_rate_now: float | None = None

    @property
    def mean_change(self) -> float | None:
        return _delta(self.mean_before, self.mean_now)

    @property
    def pass_rate_change(self) -> float | None:
        return _delta(self.pass_rate_before, self.pass_rate_now)

    @property
    def mean_worse(self) -> bool:
        """The mean moved the wrong way (up for a lower-is-better metric such as hallucination)."""
        change = self.mean_change
        if change is None:
            return False
        return change > 0 if self.lower_is_better else change < 0

    def pass_rate_dropped(self, tolerance: float = 0.0) -> bool:
        """The pass rate fell by more than `tolerance` (a fraction: 0.05 is five points)."""
        change = self.pass_rate_change
        return change is not None and -change > tolerance + 1e-12


class CaseChange(BaseModel):
    """One (case, metric) whose outcome differs from the baseline's."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    metric: str
    before: Outcome
    now: Outcome
    score_before: float | None = None
    score_now: float | None = None
    reason: str = ""  # the current result's reason: why it is what it is now

    @property
    def kind(self) -> ChangeKind:
        if self.before is Outcome.PASSED and self.now is Outcome.FAILED:
            return "regression"
        if self.before is Outcome.FAILED and self.now is Outcome.PASSED:
            return "fixed"
        return "changed"  # to or from error/unmeasured: not a verdict on the app

    @property
    def score_change(self) -> float | None:
        return _delta(self.score_before, self.score_now)


class Comparison(BaseModel):
    """The comparison as a value: per-metric changes, changed cases, and outcome agreement counts."""

    model_config = ConfigDict(frozen=True)

    metrics: list[MetricChange]
    cases: list[CaseChange]
    paired: dict[str, int]  # per metric: (case, metric) pairs present in both evaluations
    unchanged: dict[str, int]  # per metric: of those, the pairs whose outcome is the same

    def agreement(self, metric: str) -> float | None:
        """Share of the metric's (case, metric) pairs present in both whose outcome is unchanged;
        None when no case has the metric in both."""
        total = self.paired.get(metric, 0)
        return self.unchanged.get(metric, 0) / total if total else None

    @property
    def regressions(self) -> list[CaseChange]:
        return [c for c in self.cases if c.kind == "regression"]

    @property
    def fixed(self) -> list[CaseChange]:
        return [c for c in self.cases if c.kind == "fixed"]

    def failures(self, tolerance: float = 0.0) -> list[str]:
        """One line per reason to fail a CI run: a pass rate dropped beyond tolerance, a case regressed."""
        lines = [
            f"{m.name}: pass rate {m.pass_rate_before:.1%} -> {m.pass_rate_now:.1%} "
            f"(dropped more than the tolerance {tolerance:.1%})"
            for m in self.metrics
            if m.pass_rate_dropped(tolerance)
        ]
        regressed = Counter(c.metric for c in self.regressions)
        lines += [f"{metric}: {n} case(s) passed before and fail now" for metric, n in regressed.items()]
        return lines


def compare(current: EvaluationResult, baseline: EvaluationResult) -> Comparison:
    """Per-metric and per-case changes from `baseline` to `current` (metrics by name, cases by id);
    the metrics are those evaluated now (one the baseline lacks shows n/a before)."""
    before = {m.name: m for m in baseline.metrics}
    metrics = [_metric_change(m.name, before.get(m.name), m) for m in current.metrics]
    old = {(case.case_id, r.name): r for case in baseline.cases for r in case.results}
    changes: list[CaseChange] = []
    paired: Counter[str] = Counter()
    unchanged: Counter[str] = Counter()
    for case in current.cases:
        for result in case.results:
            previous = old.get((case.case_id, result.name))
            if previous is None:
                continue
            paired[result.name] += 1
            if previous.outcome == result.outcome:
                unchanged[result.name] += 1
                continue
            changes.append(
                CaseChange(
                    case_id=case.case_id,
                    metric=result.name,
                    before=previous.outcome,
                    now=result.outcome,
                    score_before=previous.score,
                    score_now=result.score,
                    reason=result.reason,
                )
            )
    return Comparison(metrics=metrics, cases=changes, paired=dict(paired), unchanged=dict(unchanged))


def load_baseline(path: str | Path) -> EvaluationResult:
    """An earlier `ragpulse eval --json` report (extra keys such as its own comparison are ignored)."""
    path = Path(path)
    try:
        return EvaluationResult.model_validate_json(path.read_bytes())
    except OSError as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error.strerror or error}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"])) or "document"
        raise BaselineError(f"{path}: not a `ragpulse eval --json` report: {where}: {first['msg']}") from None


def _metric_change(name: str, before: MetricSummary | None, now: MetricSummary) -> MetricChange:
    return MetricChange(
        name=name,
        lower_is_better=now.lower_is_better,
        mean_before=before.mean if before else None,
        mean_now=now.mean,
        pass_rate_before=before.pass_rate if before else None,
        pass_rate_now=now.pass_rate,
    )


def _delta(before: float | None, now: float | None) -> float | None:
    return None if before is None or now is None else now - before
