"""`assert_rag` and the pytest plugin (entry point pytest11), run as a user's test suite would run them."""

from __future__ import annotations

import pytest

from evaluators import Faithfulness, assert_rag

pytest_plugins = ["pytester"]

PASSAGES = ["Paris is the capital of France.", "The Louvre is a museum in Paris."]
GROUNDED = {
    "input": "What is the capital of France?",
    "actual_output": "Paris is the capital of France.",
    "retrieval_context": PASSAGES,
}
HALLUCINATED = dict(GROUNDED, actual_output="Lyon is the capital of France.")

USER_TESTS = f"""
from evaluators import assert_rag

GROUNDED = {GROUNDED!r}
HALLUCINATED = {HALLUCINATED!r}


def test_grounded_answer():
    assert_rag(GROUNDED, metrics=("faithfulness", "hallucination"))


def test_hallucinated_answer():
    assert_rag(HALLUCINATED, metrics=("faithfulness", "answer_relevancy"))


def test_fixture_is_the_forced_judge(ragpulse_judge):
    assert ragpulse_judge.info.judge == "offline"
"""


def test_plugin_passes_grounded_and_fails_hallucinated(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")  # would pick the LLM judge, but the flag wins
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_rag_app=USER_TESTS)
    run = pytester.runpytest("--ragpulse-judge", "offline")
    run.assert_outcomes(passed=2, failed=1)
    run.stdout.fnmatch_lines(
        [
            "*ragpulse: 1 of 2 metric(s) did not pass for case '0':",
            "*- faithfulness: failed, score 0.000 (threshold: at least 0.5): 0 of 1 claims supported by "
            "the context; not: 'Lyon is the capital of France.'",
        ]
    )
    assert "--ragpulse-judge" in pytester.runpytest("--help").stdout.str()


def test_assert_rag_returns_results_and_takes_metric_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)  # no key: the offline judge, as `ragpulse eval` picks
    result = assert_rag(GROUNDED, [Faithfulness(threshold=0.9)])
    assert result.by_name()["faithfulness"].score == 1.0
    expected = (
        r"hallucination: failed, score 0\.500 \(threshold: at most 0\.25\): the answer contradicts 1 of 2"
    )
    with pytest.raises(AssertionError, match=expected):
        assert_rag(HALLUCINATED, ("hallucination",), judge="offline", threshold=0.25)


def test_unmeasured_fails_the_assertion() -> None:
    with pytest.raises(AssertionError, match=r"contextual_recall: unmeasured.*'expected_output'"):
        assert_rag(GROUNDED, ("contextual_recall",), judge="offline")
