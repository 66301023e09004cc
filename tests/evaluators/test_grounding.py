"""The learned grounding judge (opt-in `LearnedJudge`): premises, the packaged model, cached checks, verdicts.

Accuracy is a benchmark (`python -m benchmarks.judge_accuracy`), not a test: here the packaged model
loads with no network and gives the documented verdicts on a small fixed set (docs/offline-judge.md).
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from evaluators.judges.base import ExtractKind, VerdictTask
from evaluators.offline import LearnedJudge
from evaluators.offline.grounding import Grounding
from evaluators.offline.grounding_model import MODEL_DIR, Calibration, GroundingModel, default_model
from evaluators.offline.idf import default_idf
from evaluators.offline.premise import hypothesis, premise

LONG = [
    "Our Lisbon store opened in 2019. It sells kitchen appliances and small furniture. "
    "The store is open Monday to Saturday from 9 am to 7 pm. It is closed on Sundays and public holidays. "
    "Parking is free for customers for the first two hours. Deliveries within Lisbon take two working days. "
    "Returns are accepted within 30 days with the receipt. Gift cards cannot be exchanged for cash.",
    "The Porto store opened in 2021 and has a café on its first floor.",
]


def test_a_short_context_is_read_whole() -> None:
    built = premise("The café is on the first floor.", ["A café.", "Open daily. The first floor has a café."])
    assert built.text == "A café. … Open daily. The first floor has a café."  # '…' between passages
    assert built.best is not None and built.best.node == 1
    assert built.nodes[0] == 1  # the deciding passage first


def test_a_long_context_gives_the_matching_sentences_and_the_one_before_within_the_budget() -> None:
    built = premise("Is the store closed on Sundays?", LONG, budget=35)
    assert "It is closed on Sundays and public holidays." in built.text
    assert "The store is open Monday to Saturday" in built.text  # the antecedent of 'It'
    assert "Gift cards" not in built.text
    assert len(built.text.split()) <= 35 + 2  # (the '…' marking a gap)


def test_excluded_sentences_are_left_out() -> None:
    whole = premise("Returns are accepted within 30 days.", LONG)
    best = whole.best
    assert best is not None
    without = premise("Returns are accepted within 30 days.", LONG, exclude=frozenset({best.position}))
    assert best.text in whole.text and best.text not in without.text


def test_a_short_claim_is_read_with_its_question() -> None:
    assert hypothesis("Arthur's Magazine", "Which magazine started first?") == (
        "Which magazine started first? Arthur's Magazine"
    )
    claim = "The store opens at 9 am on weekdays."
    assert hypothesis(claim, "When?") == claim


def test_the_packaged_model_gives_calibrated_probabilities_and_fits_the_wheel() -> None:
    """(It loads and judges with every socket refused: tests/evaluators/test_offline_network.py.)"""
    model = GroundingModel(MODEL_DIR)
    pairs = [("Orders above 50 euros ship for free.", "Shipping is free over 50 euros."), ("", "x")]
    p = model.probabilities(pairs)
    assert p.shape == (2, 3)
    assert np.allclose(p.sum(axis=1), 1.0) and (p >= 0).all()
    c = model.calibration
    assert 0 < c.supported < 1 and 0 < c.contradicted < 1 and c.temperature > 0
    assert {f.name for f in MODEL_DIR.iterdir()} >= {"model.onnx", "tokenizer.json", "model.json"}
    assert sum(f.stat().st_size for f in MODEL_DIR.iterdir()) < 30 * 1024 * 1024  # what the wheel may carry


class _Counting:
    """The model's interface, counting runs (a check is asked again by the record's other metrics)."""

    calibration = Calibration("counting", 1.0, 0.5, 0.8, 256)
    name = "counting"

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        self.pairs += pairs
        return np.tile([0.9, 0.05, 0.05], (len(pairs), 1))


def test_checks_are_batched_and_cached() -> None:
    model = _Counting()
    grounding = Grounding(model, default_idf())  # type: ignore[arg-type]
    claims = [("The store opened in 2019.", ""), ("Parking is free.", "")]
    first = grounding.check(claims, LONG)
    again = grounding.check([*claims, ("Deliveries take two days.", "")], LONG)
    assert len(model.pairs) == 3  # one run for two claims, then only the new claim
    assert again[:2] == first
    assert first[0].node == 0


def _verdicts(judge: LearnedJudge, answer: str, contexts: list[str], question: str = "") -> list[str]:
    claims = asyncio.run(judge.extract(answer, ExtractKind.CLAIMS, question=question))
    return [v.verdict for v in asyncio.run(judge.verdicts(claims, contexts, VerdictTask.SUPPORTED))]


@pytest.fixture(scope="module")
def judge() -> LearnedJudge:
    return LearnedJudge(grounding=default_model())


# The documented verdicts (docs/grounding-model.md, "What it says on a few cases"). Cases written for
# this test, none of them in the training data. (What it gets wrong is documented there too: the
# paraphrase "Shipping costs nothing for orders over 50 euros" is called contradicted.)
SHIPPING = ["Orders above 50 euros ship for free. Smaller orders pay a flat 4.90 euro delivery fee."]


def test_a_near_copy_is_supported(judge: LearnedJudge) -> None:
    assert _verdicts(judge, "Orders above 50 euros ship for free.", SHIPPING) == ["yes"]


def test_a_changed_amount_is_not_supported(judge: LearnedJudge) -> None:
    assert _verdicts(judge, "Orders above 20 euros ship for free.", SHIPPING) != ["yes"]


def test_an_invented_addition_is_not_supported(judge: LearnedJudge) -> None:
    verdicts = _verdicts(judge, "Orders above 50 euros ship for free, and delivery takes one day.", SHIPPING)
    assert verdicts[0] == "yes" and verdicts[-1] != "yes"


def test_a_verdict_names_the_passage_that_decides_it(judge: LearnedJudge) -> None:
    """Whatever the verdict, its reason quotes what the model read from the passage that decides it.
    (This one the model gets wrong, P(supported) 0.37: the Lisbon store's sentences beside it, another
    store that opened in another year, pull it down; docs/grounding-model.md.)"""
    claims = ["The Porto store has a café on its first floor."]
    [verdict] = asyncio.run(judge.verdicts(claims, LONG, VerdictTask.SUPPORTED))
    assert 'node 1: "The Porto store opened in 2021 and has a café on its first floor."' in verdict.reason
    assert verdict.confidence is not None and 0.5 <= verdict.confidence <= 1.0


def test_an_uncontradicted_supported_claim_names_its_passage(judge: LearnedJudge) -> None:
    """Faithfulness' contradiction mode: 'no' (not contradicted) because the passage states it."""
    claims = ["Orders above 50 euros ship for free."]
    [verdict] = asyncio.run(judge.verdicts(claims, SHIPPING, VerdictTask.CONTRADICTED))
    assert verdict.verdict == "no" and verdict.supporting_ids == (0,)
    assert verdict.reason.startswith('matches node 0: "Orders above 50 euros ship for free.')
