"""The offline judge on the hand-written grounding cases (tests/data/grounding_cases*.jsonl): floors.

Three sets, each held to per-category floors that sit just under what the committed model measures
(`python -m benchmarks.judge_accuracy` prints the same figures), so a regression fails while a
retrain may move a case:
- grounding_cases.jsonl, the headline set (66 cases): paraphrases that must stay supported, and
  number/date, entity and negation contradictions, unsupported additions, off-topic answers;
- grounding_cases_more.jsonl: abstentions ('the documents do not mention X'), six non-Latin scripts,
  amounts written in other units or formats, bare replies to yes/no questions ('Yes.', 'No, it
  isn't.'), and paraphrases by an antonym under the other polarity ('not allowed' for 'prohibited');
- grounding_cases_unresponsive.jsonl: answers on the question's topic that do, or do not, answer it.
What the model still misses is listed in docs/offline-judge.md.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from evaluators.offline import OfflineJudge
from evaluators.offline.grounding_cases import judge_case, load_cases

DATA = Path(__file__).resolve().parents[1] / "data"
# file -> (category -> floor, overall floor)
FLOORS: dict[str, tuple[dict[str, float], float]] = {
    "grounding_cases.jsonl": (
        {
            "supported_paraphrase": 0.85,
            "number_contradiction": 0.85,
            "entity_swap": 0.85,
            "negation": 0.85,
            "unsupported_addition": 0.90,
            "off_topic": 1.00,
        },
        0.90,
    ),
    "grounding_cases_more.jsonl": (
        {
            "abstention": 0.85,
            "implicit_negation": 0.85,
            "negated_paraphrase": 0.85,
            "non_latin": 0.80,
            "units": 0.85,
            "yes_no_reply": 0.70,
        },
        0.85,
    ),
    "grounding_cases_unresponsive.jsonl": ({"unresponsive": 0.85, "responsive": 0.85}, 0.85),
}
CASES = {name: load_cases(DATA / name) for name in FLOORS}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_each_set_covers_its_categories_with_unique_ids(name: str) -> None:
    cases = CASES[name]
    assert {case["category"] for case in cases} == set(FLOORS[name][0])
    assert len({case["id"] for case in cases}) == len(cases)
    assert len(CASES["grounding_cases.jsonl"]) >= 60


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict[str, list[bool]]]:
    judge = OfflineJudge()
    found: dict[str, dict[str, list[bool]]] = {}
    for name, cases in CASES.items():
        by_category: dict[str, list[bool]] = defaultdict(list)
        for case in cases:
            ok, _detail = asyncio.run(judge_case(judge, case))
            by_category[case["category"]].append(ok)
        found[name] = by_category
    return found


def _floors() -> list[Any]:
    return [
        pytest.param(name, category, id=f"{name}:{category}")
        for name in FLOORS
        for category in FLOORS[name][0]
    ]


@pytest.mark.parametrize(("name", "category"), _floors())
def test_each_category_reaches_its_floor(
    outcomes: dict[str, dict[str, list[bool]]], name: str, category: str
) -> None:
    hits = outcomes[name][category]
    assert sum(hits) / len(hits) >= FLOORS[name][0][category], f"{category}: {sum(hits)}/{len(hits)}"


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_overall_accuracy_reaches_the_floor(outcomes: dict[str, dict[str, list[bool]]], name: str) -> None:
    hits = [ok for values in outcomes[name].values() for ok in values]
    assert sum(hits) / len(hits) >= FLOORS[name][1], f"{sum(hits)}/{len(hits)}"
