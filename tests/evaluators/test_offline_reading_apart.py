"""`reads_apart`: when a pair window's or a passage's quantities are its sentences' (the judge then
reads each sentence once and compares a claim with it once). A wrong 'yes' would change verdicts,
so every rule is shown to be needed and the rules together are checked on random token soups."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from evaluators.offline.passage_match import passage_stems
from evaluators.offline.quantities import Quantity, quantities, reads_apart
from evaluators.offline.sentences import passage_parts, windows
from evaluators.offline.text import content_stems

DATA = Path(__file__).resolve().parents[1] / "data"
# Tokens the readers react to (numbers, months, eras, currencies, units, range and joining words).
_SOUP = (
    "20 5 1969 12,000 3.5 $5 Rs. Rs A.D. AD BC of de March july Juli May twenty five hundred million a half "
    "an km metres square per hour to and - % Python version people In Since the 20th 年 1969年 7月 USD € The "
    "It km/h °C cats miles 20. 3. between or years months 2020-01-05 03/04/2020 Jan. No. x"
)
TOKENS = _SOUP.split()


def read(text: str) -> list[tuple[object, ...]]:
    """What a quantity says, without where it is."""
    return [_fields(q) for q in quantities(text)]


def _fields(q: Quantity) -> tuple[object, ...]:
    return (q.kind, q.value, q.unit, q.amount, q.year, q.month, q.day, q.ambiguous, q.ordinal, q.noun, q.text)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("It opened in March.", "20 people came."),  # 'March. 20': a date
        ("The score was 20.", "July was hot."),  # '20. July': a date
        ("It opened in March.", "Of 20 guests, most stayed."),  # 'March. of 20'
        ("It was built in A.D.", "1066 saw the conquest."),  # 'A.D. 1066'
        ("The fee is Rs.", "500 per visit."),  # 'Rs. 500'
        ("It weighs 5", "Kg of apples."),  # no full stop: '5 Kg'
    ],
)
def test_a_number_read_across_the_seam_keeps_the_pair_whole(first: str, second: str) -> None:
    assert read(f"{first} {second}") != read(first) + read(second)
    assert not reads_apart(first, second)


def test_sentences_that_read_apart() -> None:
    assert reads_apart("It opened in 1889.", "In 1969, 3 km were added.")
    assert reads_apart("Report 12-345.", "Engineers in Lyon counted 12 offices.")


def test_random_sentences_that_read_apart_read_as_their_parts() -> None:
    rng = random.Random(11)

    def sentence() -> str:
        return " ".join(rng.choices(TOKENS, k=rng.randint(1, 6))) + rng.choice((".", "!", "?", "", "."))

    apart = 0
    for _ in range(4000):
        first, second = sentence(), sentence()
        if reads_apart(first, second):
            apart += 1
            assert read(f"{first} {second}") == read(first) + read(second), (first, second)
    assert apart > 1000


def test_windows_and_passages_of_the_hand_sets_read_as_their_parts() -> None:
    passages = {
        text
        for path in DATA.glob("grounding_cases*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
        for text in json.loads(line).get("contexts", [])
    }
    split = 0
    for passage in passages:
        for window in windows(passage, 0):
            assert read(window.text) == [q for part in window.parts for q in read(part)]
            assert quantities(window.text) == window.quantities
            split += len(window.parts) > 1
        assert read(passage) == [q for part in passage_parts(passage) for q in read(part)]
    assert split > 30


def test_a_passage_has_the_stems_it_would_have_read_whole() -> None:
    passages = [
        "The tower is 330 metres tall. It opened on 31 March 1889.",
        "A rolling update in-sync replaces 25% of the Pods; covid-19 rules apply. Doesn't it?",
        "Die Brücke ist 1.200 m lang. Sie wurde 1932 eröffnet.",  # not ASCII: read whole
        "Line one without a stop\nLine two. Line three.",  # not joined by spaces: read whole
    ]
    for passage in passages:
        assert passage_stems(passage) == frozenset(content_stems(passage))
