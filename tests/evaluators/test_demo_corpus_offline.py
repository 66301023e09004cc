"""The demo's answers score as a user expects under the offline judge (what `ragpulse demo` shows).

Grounded answers average at least 0.9 faithfulness, invented ones at most 0.2, and every
answer that contradicts its passages fails hallucination, through the public `evaluate()`.
"""

from __future__ import annotations

import pytest

from collector.commands.demo_corpus import TOPICS
from evaluators import Faithfulness, Hallucination, TestCase, evaluate
from evaluators.offline import OfflineJudge


@pytest.fixture(scope="module")
def scored() -> dict[str, list[dict[str, float | None]]]:
    kinds = ("grounded", "invented", "contradicted")
    cases = [
        TestCase(input=t.question, actual_output=getattr(t, kind), retrieval_context=list(t.passages))
        for kind in kinds
        for t in TOPICS
    ]
    result = evaluate(cases, [Faithfulness(), Hallucination()], OfflineJudge())
    rows = [{r.name: r.score for r in case.results} for case in result.cases]
    return {kind: rows[i * len(TOPICS) : (i + 1) * len(TOPICS)] for i, kind in enumerate(kinds)}


def _faithfulness(rows: list[dict[str, float | None]]) -> list[float]:
    values = [row["faithfulness"] for row in rows]
    assert None not in values, values
    return [v for v in values if v is not None]


def test_grounded_answers_are_faithful(scored: dict[str, list[dict[str, float | None]]]) -> None:
    values = _faithfulness(scored["grounded"])
    assert sum(values) / len(values) >= 0.9, values


def test_invented_answers_are_not(scored: dict[str, list[dict[str, float | None]]]) -> None:
    values = _faithfulness(scored["invented"])
    assert sum(values) / len(values) <= 0.2, values


def test_contradicted_answers_fail_hallucination(scored: dict[str, list[dict[str, float | None]]]) -> None:
    values = [row["hallucination"] for row in scored["contradicted"]]
    assert all(v is not None and v > Hallucination().threshold for v in values), values
    grounded = [row["hallucination"] for row in scored["grounded"]]
    assert all(v == 0.0 for v in grounded), grounded
