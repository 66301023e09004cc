"""The threshold fit: the best cut of the scores, measured held out, applied only when it earns it."""

from __future__ import annotations

import random

import pytest

from collector.page.store import Store
from collector.review.config import ReviewConfig
from collector.review.corrections import Correction
from collector.review.fit import FittedThresholds, Labelled, best_threshold, fit, passes, refit


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_the_fitted_threshold_agrees_as_much_as_any_threshold_could(lower_is_better: bool) -> None:
    rng = random.Random(7)
    for _ in range(20):
        items = [
            Labelled(round(rng.random(), 2), rng.random() < 0.5, 0.5, lower_is_better) for _ in range(40)
        ]
        found = best_threshold(items, 0.5, lower_is_better)

        def agreement(t: float, items: list[Labelled] = items) -> int:
            return sum(passes(i.score, t, lower_is_better) == i.human_passed for i in items)

        assert agreement(found) == max(agreement(t / 1000) for t in range(-1, 1002))


def test_held_out_agreement_leaves_each_correction_out() -> None:
    # Reviewers pass everything from 0.55 up: the shipped 0.7 disagrees on three, a refit on none.
    items = [Labelled(s, s >= 0.55, 0.7) for s in (0.2, 0.3, 0.4, 0.56, 0.6, 0.65, 0.8, 0.9)]
    found = fit("shop", "faithfulness", "offline", items, min_corrections=5)
    assert found.agreement_shipped == 5 / 8 and found.agreement_fitted == 1.0
    assert found.applied and 0.4 < found.fitted < 0.56
    # One label alone on its side cannot be predicted from the others: held out, that costs it.
    lone = [Labelled(0.5, True, 0.7)] + [Labelled(s, False, 0.7) for s in (0.1, 0.2, 0.3, 0.6)]
    assert fit("shop", "faithfulness", "offline", lone, min_corrections=2).agreement_fitted < 1.0


def test_a_fit_that_does_not_beat_the_shipped_threshold_is_not_applied() -> None:
    items = [Labelled(s, s >= 0.7, 0.7) for s in (0.1, 0.5, 0.69, 0.7, 0.9, 0.95)]
    found = fit("shop", "faithfulness", "offline", items, min_corrections=2)
    assert found.agreement_shipped == 1.0 and not found.applied and found.in_force == 0.7


def test_after_a_restart_the_shipped_threshold_is_the_configured_one() -> None:
    # Corrections made while a fitted 0.55 was in force: a refit at start still compares with 0.7.
    store = Store()
    store.write_corrections(
        [
            Correction(f"t{i}", "s", "faithfulness", "Ana", float(i), right, (), None, "shop", "offline",
                       "passed" if score >= 0.55 else "failed", score, 0.55)
            for i, (score, right) in enumerate(((0.3, True), (0.6, True), (0.65, True), (0.9, True)))
        ]
    )  # fmt: skip
    thresholds = FittedThresholds(configured=lambda metric: 0.7 if metric == "faithfulness" else None)
    with store.reader() as db:
        (found,) = refit(db, thresholds, ReviewConfig(min_corrections=2))
    assert found.shipped == 0.7 and found.agreement_shipped == 0.5 and found.applied
