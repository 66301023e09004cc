"""Pass thresholds refitted on reviewers' corrections: the judge learns from the people who read it.

A reviewer marks an evaluation's outcome right or wrong on the page (`collector/page/corrections.py`).
That gives, per (service, metric, judge), pairs of the judge's score and the human's pass/fail. The
threshold that best separates them may not be the metric's shipped one: a team's answers paraphrase
more, or its documents are terser, than the data the judge was built on.

`fit` chooses the threshold that agrees most with the corrections and measures it honestly: the
shipped threshold is scored on every correction (none of them chose it), the fitted one by leaving
each correction out in turn (a threshold fitted on the others judges it). The fit is applied only when
that held-out agreement beats the shipped threshold's, and only from `min_corrections` on. Both figures
are exported as `ragpulse_judge_human_agreement_ratio{metric,service,judge,thresholds}` so a team sees
the gain, or that there is none yet.

`FittedThresholds` holds the fits in force; `RecordEvaluator` asks it for each result, before the
failure causes are named, so a flipped outcome gets the cause (or none) that belongs to it.
"""

from __future__ import annotations

import bisect
import itertools
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from collector.labels import LabelPolicy
from collector.review import corrections
from collector.review.config import ReviewConfig
from collector.review.metrics import FITTED_THRESHOLD, JUDGE_CORRECTION_AGREEMENT
from evaluators import MetricResult
from evaluators.result import Outcome

MAX_CORRECTIONS_PER_FIT = 500  # the latest ones: the leave-one-out check is quadratic
ALL_SERVICES = "all"  # the service of a fit with `review.scope: all`


@dataclass(frozen=True, slots=True)
class Labelled:
    """One corrected evaluation: the judge's score and what the reviewer says the outcome should be."""

    score: float
    human_passed: bool
    threshold: float  # the threshold the evaluation was scored with
    lower_is_better: bool = False


@dataclass(frozen=True, slots=True)
class Fit:
    service: str
    metric: str
    judge: str
    shipped: float  # the metric's own threshold
    fitted: float
    lower_is_better: bool
    corrections: int
    agreement_shipped: float  # on every correction
    agreement_fitted: float  # held out: each correction judged by a threshold fitted without it
    applied: bool

    @property
    def in_force(self) -> float:
        return self.fitted if self.applied else self.shipped


def passes(score: float, threshold: float, lower_is_better: bool) -> bool:
    return score <= threshold if lower_is_better else score >= threshold


def best_threshold(items: Sequence[Labelled], shipped: float, lower_is_better: bool) -> float:
    """The threshold agreeing with most items; among equals the one nearest the shipped threshold.
    Candidates: the shipped one and the midpoints between neighbouring distinct scores (plus one
    beyond each end), so every way of cutting the scores is tried once; each is counted by bisection
    on the sorted scores, so a fit is O(n log n) and the leave-one-out check stays cheap."""
    scores = sorted({item.score for item in items})
    candidates = {shipped}
    candidates.update((low + high) / 2 for low, high in itertools.pairwise(scores))
    if scores:
        candidates.update((scores[0] - 1e-6, scores[-1] + 1e-6))
    passing = sorted(i.score for i in items if i.human_passed)
    failing = sorted(i.score for i in items if not i.human_passed)

    def agreement(threshold: float) -> int:
        if lower_is_better:  # passes at score <= threshold
            return (
                bisect.bisect_right(passing, threshold)
                + len(failing)
                - bisect.bisect_right(failing, threshold)
            )
        return len(passing) - bisect.bisect_left(passing, threshold) + bisect.bisect_left(failing, threshold)

    return max(sorted(candidates), key=lambda t: (agreement(t), -abs(t - shipped)))


def fit(
    service: str,
    metric: str,
    judge: str,
    items: Sequence[Labelled],
    min_corrections: int,
    shipped: float | None = None,
) -> Fit:
    """`items`, newest last; `shipped`: the metric's configured threshold when known, else the one
    most of the corrected evaluations were scored with."""
    items = list(items)[-MAX_CORRECTIONS_PER_FIT:]
    lower = items[-1].lower_is_better if items else False
    if shipped is None:
        shipped = Counter(i.threshold for i in items).most_common(1)[0][0] if items else 0.5
    n = len(items)
    before = sum(passes(i.score, shipped, lower) == i.human_passed for i in items) / n if n else 0.0
    held_out = 0
    for k, item in enumerate(items):
        threshold = best_threshold(items[:k] + items[k + 1 :], shipped, lower)
        held_out += passes(item.score, threshold, lower) == item.human_passed
    after = held_out / n if n else 0.0
    fitted = best_threshold(items, shipped, lower) if items else shipped
    applied = n >= min_corrections and after > before and fitted != shipped
    return Fit(service, metric, judge, shipped, fitted, lower, n, before, after, applied)


def refit(db: sqlite3.Connection, thresholds: FittedThresholds, config: ReviewConfig) -> tuple[Fit, ...]:
    """Fit every (service, metric, judge) that has corrections saying the outcome, and put the fits in
    force (the ones that earned it, when `review.fit_thresholds`)."""
    groups: dict[tuple[str, str, str], list[Labelled]] = {}
    for c in corrections.labelled(db):
        human = c.human_passed
        if human is None or c.score is None:
            continue
        service = c.service if config.scope == "service" else ALL_SERVICES
        groups.setdefault((service, c.metric, c.judge), []).append(
            Labelled(c.score, human, c.threshold if c.threshold is not None else 0.5, c.lower_is_better)
        )
    fits = []
    for (service, metric, judge), items in sorted(groups.items()):
        found = fit(service, metric, judge, items, config.min_corrections, thresholds.shipped(metric))
        fits.append(found if config.fit_thresholds else replace(found, applied=False))
    thresholds.update(fits)
    return tuple(fits)


class FittedThresholds:
    """The fits in force, read on the evaluation path, replaced whole by `update` (no lock needed)."""

    def __init__(
        self,
        services: LabelPolicy | None = None,
        scope: str = "service",
        configured: Callable[[str], float | None] | None = None,
    ) -> None:
        """`configured`: a metric's threshold as the settings make it (a fit then compares with it even
        after a restart, when corrections may have been scored with a fitted one); without it, or for
        a name it does not know, the threshold most corrections were scored with."""
        self._services, self._scope = services or LabelPolicy(), scope
        self._configured = configured or (lambda metric: None)
        self._in_force: dict[tuple[str, str, str], float] = {}
        self.fits: tuple[Fit, ...] = ()

    def shipped(self, metric: str) -> float | None:
        return self._configured(metric)

    def update(self, fits: Iterable[Fit]) -> None:
        self.fits = tuple(fits)
        self._in_force = {(f.service, f.metric, f.judge): f.fitted for f in self.fits if f.applied}
        for f in self.fits:
            service = f.service if f.service == ALL_SERVICES else self._services.bound(f.service)
            labels = (f.metric, service, f.judge)
            JUDGE_CORRECTION_AGREEMENT.labels(*labels, "shipped").set(f.agreement_shipped)
            JUDGE_CORRECTION_AGREEMENT.labels(*labels, "fitted").set(f.agreement_fitted)
            FITTED_THRESHOLD.labels(*labels).set(f.in_force)

    def apply(self, service: str, judge: str, result: MetricResult) -> MetricResult:
        """`result` with the fitted threshold's outcome where a fit is in force for it."""
        scope = service if self._scope == "service" else ALL_SERVICES
        threshold = self._in_force.get((scope, result.name, judge))
        if (
            threshold is None
            or result.score is None
            or result.outcome not in (Outcome.PASSED, Outcome.FAILED)
        ):
            return result
        passed = passes(result.score, threshold, result.lower_is_better)
        outcome = Outcome.PASSED if passed else Outcome.FAILED
        return result.model_copy(update={"threshold": threshold, "outcome": outcome, "passed": passed})
