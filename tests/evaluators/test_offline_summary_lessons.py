"""What real news summaries (HaluEval summarization, CNN/DailyMail articles) taught the offline judge.
A summary's sentence joins facts from several of the article's sentences: a name from one, the words
around it from another. Read as a QA answer is read, that looked like a name swap or a flipped
negation, and the hallucination metric failed right summaries as often as hallucinated ones."""

from __future__ import annotations

import pytest

from evaluators.judges.base import VerdictTask
from evaluators.offline import OfflineJudge
from evaluators.offline.slots import has_rival, neighbours


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    return OfflineJudge()


BARNER = [
    "Asabi Barner, 37, is suing Black Ink tattoo parlor in Harlem, New York City, for a chest tattoo that "
    "left her scarred.",
    "Barner, a mother of two from South Carolina, saw the shop on a reality show.",
]
PLANETS = ["Jupiter is the largest planet in the Solar System.", "Saturn is best known for its rings."]
STAMPEDE = [
    "The Bunkhouse Stampede Finals took place at the Nassau Coliseum in Uniondale, New York, in January "
    "1988.",
    "Uniondale is a hamlet in the Town of Hempstead.",
]


@pytest.mark.parametrize(
    ("claim", "passages", "verdict"),
    [
        # South Carolina is in the other passage; node 0's Harlem stands by 'parlor', not by '37' or 'got'
        ("Asabi Barner, 37, of South Carolina got a tattoo at Black Ink tattoo parlor.", BARNER, "idk"),
        ("Saturn is the largest planet in the Solar System.", PLANETS, "no"),  # Jupiter stands by 'largest'
        ("The Bunkhouse Stampede Finals took place in Hempstead, New York, in January 1988.", STAMPEDE, "no"),
        # 'staged' is not in node 0: where Hempstead stands there cannot be told, so any rival counts
        (
            "The Bunkhouse Stampede Finals were staged in Hempstead, New York, in January 1988.",
            STAMPEDE,
            "no",
        ),
    ],
)
async def test_a_name_swap_needs_a_rival_where_the_claim_s_name_stands(
    judge: OfflineJudge, claim: str, passages: list[str], verdict: str
) -> None:
    """A name found in another passage, not in the one the claim matches best, was a swap whenever that
    one named anybody else. It is one when another name stands where the claim's name stands (beside
    the same word), or when the passage lacks the claim's words beside it (a paraphrase: the slot cannot
    be told). The first row was called contradicted."""
    [judged] = await judge.verdicts([claim], passages, VerdictTask.SUPPORTED)
    assert judged.verdict == verdict, judged.reason


def test_a_rival_stands_beside_the_word_the_claim_s_name_stands_beside() -> None:
    claim = "Saturn is the largest planet."
    assert has_rival(claim, "Saturn", "Jupiter is the largest planet.", ("jupiter",), ("Saturn", "Jupiter"))
    assert not has_rival(
        claim, "Saturn", "NASA says the largest planet is big.", ("nasa",), ("Saturn", "NASA")
    )
    assert has_rival(
        claim, "Saturn", "Jupiter tops the list.", ("jupiter",), ("Saturn", "Jupiter")
    )  # no slot
    assert not has_rival(claim, "Saturn", "The largest planet.", (), ("Saturn",))
    assert neighbours("Exports to the UK rose.", "uk", frozenset()) == {"export", "ros"}  # (stems)
    assert neighbours("Exports to Ukraine rose.", "uk", frozenset()) == frozenset()  # a whole word only


CAPSULE = (
    "It involves covering coffee granules in milk powder then dipping the whole lot in sugar to create a "
    "capsule with no waste created whatsoever."
)
PLEA = "An Ohio man accused of sexually assaulting three girls has pleaded not guilty to 19 counts in court."


@pytest.mark.parametrize(
    ("claim", "passage", "verdict"),
    [
        ("The pods are coffee granules coated in milk powder and dipped in sugar.", CAPSULE, "idk"),
        ("He was accused of sexually assaulting three girls.", PLEA, "yes"),
        ("The capsules create waste.", CAPSULE, "no"),  # what the negation denies is the claim's
        ("The Ohio man pleaded guilty to 19 counts.", PLEA, "no"),
    ],
)
async def test_a_negation_flips_a_claim_only_when_it_denies_the_claim_s_words(
    judge: OfflineJudge, claim: str, passage: str, verdict: str
) -> None:
    """A negation counted when its stretch shared a word with the claim, though it denies other words
    ('with no waste created whatsoever', 'pleaded not guilty to 19 counts'): the first two rows were
    called contradicted. Now a flip needs the claim's parity to differ from the stretch's count and
    from the count of negations that deny the claim's words."""
    [judged] = await judge.verdicts([claim], [passage], VerdictTask.SUPPORTED)
    assert judged.verdict == verdict, judged.reason
