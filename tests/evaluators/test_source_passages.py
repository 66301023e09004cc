"""`source_passages` names the passage a context statement came from, as the word-overlap count did."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from evaluators.metrics.retrieval import source_passages

_WORD = re.compile(r"\w+")


def by_overlap(statements: Sequence[str], passages: Sequence[str]) -> list[list[int]]:
    """The definition: the first passage sharing most of the statement's words (none if none does)."""
    pools = [set(_WORD.findall(p.lower())) for p in passages]
    sources: list[list[int]] = []
    for statement in statements:
        words = set(_WORD.findall(statement.lower()))
        overlaps = [len(words & pool) for pool in pools]
        best = max(overlaps, default=0)
        sources.append([overlaps.index(best)] if best else [])
    return sources


def test_hand_cases() -> None:
    passages = ["The tower is 330 metres tall.", "It was built in 1889 for the fair.", "The tower was built."]
    statements = ["It was built in 1889.", "The tower was built.", "Paris, lovely!", "", "tall fair"]
    assert source_passages(statements, passages) == [[1], [2], [], [], [0]]
    assert source_passages(statements, []) == [[], [], [], [], []]


def test_equals_the_overlap_count_on_random_texts() -> None:
    rng = random.Random(7)
    vocabulary = ["a", "b", "c", "d", "e", "f", "g", "h", "Tower", "tower", "1889", "é-x", "x_y", ",", "."]

    def text() -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 9)))

    for _ in range(2000):
        passages = [text() for _ in range(rng.randint(0, 5))]
        statements = [text() for _ in range(rng.randint(0, 6))]
        assert source_passages(statements, passages) == by_overlap(statements, passages)
