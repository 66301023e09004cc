"""Every worked example of METRICS.md, reproduced on fixed verdicts to four decimals."""

from __future__ import annotations

import math

import pytest

from evaluators import scores


def test_contextual_precision_five_nodes() -> None:
    assert scores.contextual_precision([False, True, True, False, False]) == pytest.approx(0.5833, abs=1e-4)


def test_context_precision_ragas_two_nodes() -> None:
    assert scores.contextual_precision([False, True]) == pytest.approx(0.5, abs=1e-4)


def test_contextual_precision_without_relevant_nodes_is_zero() -> None:
    assert scores.contextual_precision([False, False]) == 0.0
    assert scores.contextual_precision([]) == 0.0


def test_contextual_recall_one_of_two_statements() -> None:
    assert scores.verdict_ratio([True, False]) == pytest.approx(0.5, abs=1e-4)


def test_contextual_relevancy_nine_of_eleven() -> None:
    per_node = [[False], [False], [True] * 3, [True] * 3, [True] * 3]
    assert scores.verdict_ratio([v for node in per_node for v in node]) == pytest.approx(0.8182, abs=1e-4)


def test_context_entity_recall_examples() -> None:
    expected = {"Taj Mahal", "Yamuna", "Agra", "1631", "Shah Jahan", "Mumtaz Mahal"}
    first = {"Taj Mahal", "Agra", "Shah Jahan", "Mumtaz Mahal", "India"}
    second = {"Taj Mahal", "UNESCO", "India"}
    assert scores.context_entity_recall(expected, first) == pytest.approx(0.6667, abs=1e-4)
    assert scores.context_entity_recall(expected, second) == pytest.approx(0.1667, abs=1e-4)


def test_entity_matching_ignores_case_and_spacing() -> None:
    assert scores.context_entity_recall(["Shah  Jahan"], ["shah jahan"]) == 1.0


def test_answer_relevancy_both_statements_relevant() -> None:
    assert scores.verdict_ratio([True, True]) == 1.0


def test_answer_relevancy_similarity_mean_cosine() -> None:
    assert scores.mean([0.92, 0.91, 0.93]) == pytest.approx(0.92, abs=1e-4)


def test_faithfulness_einstein() -> None:
    assert scores.verdict_ratio([True, False]) == pytest.approx(0.5, abs=1e-4)


def test_hallucination_no_contradicted_context() -> None:
    assert scores.verdict_ratio([False, False]) == 0.0


def test_noise_sensitivity_one_of_three() -> None:
    assert scores.verdict_ratio([False, True, False]) == pytest.approx(0.3333, abs=1e-4)


def test_answer_correctness_f1_example() -> None:
    assert scores.factual_f1(tp=1, fp=1, fn=1) == pytest.approx(0.5, abs=1e-4)
    assert scores.answer_correctness(1, 1, 1, similarity=0.9) == pytest.approx(
        0.75 * 0.5 + 0.25 * 0.9, abs=1e-4
    )
    assert scores.answer_correctness(1, 1, 1, similarity=0.9, weights=(1.0, 0.0)) == pytest.approx(0.5)


def test_harmonic_mean_zero_dominates() -> None:
    assert scores.harmonic_mean([0.5, 1.0]) == pytest.approx(0.6667, abs=1e-4)
    assert scores.harmonic_mean([0.9, 0.0, 0.8]) == 0.0


def test_geval_weighted_by_probabilities() -> None:
    assert scores.geval_weighted({6: 0.25, 7: 0.5, 8: 0.25}) == pytest.approx(7.0)
    assert scores.geval_weighted({5: 0.3, 6: 0.1}) == pytest.approx(5.25, abs=1e-4)  # renormalised
    assert scores.normalise_range(5.25, 1, 10) == pytest.approx(0.4722, abs=1e-4)


def test_cosine_is_reported_negative_not_clipped() -> None:
    assert scores.cosine_similarity([1.0, 0.0], [-1.0, 0.0]) == -1.0


def test_majority_vote_and_strict() -> None:
    assert scores.majority_vote([True, False, True]) == 1.0
    assert scores.majority_vote([True, False, False]) == 0.0
    assert scores.strict_score(0.99, lower_is_better=False) == 0.0
    assert scores.strict_score(0.01, lower_is_better=True) == 1.0
    assert scores.passes(0.2, 0.5, lower_is_better=True)


@pytest.mark.parametrize(
    "call",
    [
        lambda: scores.verdict_ratio([]),
        lambda: scores.context_entity_recall([], ["x"]),
        lambda: scores.factual_f1(0, 0, 0),
        lambda: scores.harmonic_mean([]),
        lambda: scores.geval_weighted({}),
        lambda: scores.cosine_similarity([0.0, 0.0], [1.0, 0.0]),
        lambda: scores.mean([]),
    ],
)
def test_undefined_inputs_raise_instead_of_nan(call) -> None:
    with pytest.raises(scores.UndefinedScoreError):
        value = call()
        assert not math.isnan(value)
