"""What HaluEval dialogue's knowledge taught the offline judge. Its knowledge is knowledge-graph
triples concatenated without a space, the next triple starting with the last one's object ('... wrote
The Secret Agent: A Simple TaleThe Secret Agent: A Simple Tale was released 19071907 was the year
...'); 56% of its 10,000 knowledge texts are cut apart. Read as one sentence, a claim matched a run of
glued triples and a year read as the number 19071907. Its hallucinated responses change a genre or a
sport ('Graceling is a horror novel' against 'Graceling has genre Romance novel'), often of a subject
the knowledge names in several triples or that the response calls 'it'. The knowledge below is
HaluEval's, verbatim."""

from __future__ import annotations

import pytest

from evaluators.judges.base import VerdictTask
from evaluators.offline import OfflineJudge
from evaluators.offline.features import GroundingFeaturizer, prepare
from evaluators.offline.lexicon import antonym
from evaluators.offline.sentences import glued_joins, passage_parts

SECRET_AGENT = (
    "Joseph Conrad wrote The Secret Agent: A Simple TaleThe Secret Agent: A Simple Tale was released "
    "19071907 was the year that released The Secret Agent: A Simple Tale. The Secret Agent: A Simple Tale "
    "is written by Joseph Conrad"
)
PROPOSAL = (
    "The Ocean at the End of the Lane is in language English. English has examples: The ProposalThe "
    "Proposal is written by Katie AshleyKatie Ashley wrote The Proposition. The Proposition is written by "
    "Nick Cave"
)


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    return OfflineJudge()


@pytest.mark.parametrize(
    ("claim", "knowledge", "verdict"),
    [
        ("The Secret Agent: A Simple Tale was released in 1907.", SECRET_AGENT, "yes"),  # was: 1907 not found
        ("The Secret Agent: A Simple Tale was released in 1905.", SECRET_AGENT, "no"),  # was: 1905 not found
        ("Katie Ashley wrote The Proposal.", PROPOSAL, "yes"),
        ("Nick Cave also wrote The Proposal.", PROPOSAL, "no"),  # was: supported by the glued run
    ],
)
async def test_glued_triples_are_judged_one_by_one(
    judge: OfflineJudge, claim: str, knowledge: str, verdict: str
) -> None:
    [judged] = await judge.verdicts([claim], [knowledge], VerdictTask.SUPPORTED)
    assert judged.verdict == verdict, judged.reason


def test_a_passage_of_glued_statements_is_read_sentence_by_sentence() -> None:
    """Its words and quantities are its sentences': glued ones are cut apart, not read across the cut."""
    assert glued_joins(SECRET_AGENT) == (True, True, False)
    assert passage_parts(SECRET_AGENT)[1:3] == (
        "The Secret Agent: A Simple Tale was released 1907",
        "1907 was the year that released The Secret Agent: A Simple Tale.",
    )
    assert glued_joins("One sentence.  Two spaces before this one.") is None


TAKEN = (
    "Holly Valance starred in TakenTaken is starring Holly ValanceHolly Valance starred in Taken. Taken has "
    "genre Suspense"
)
TRAFFIC = (
    "Michael O'Neill starred in TrafficTraffic is starring Michael O'NeillMichael O'Neill starred in "
    "Traffic. Traffic has genre Drama"
)
DHAWAN = "Shikhar Dhawan : `Sport played`: Cricket (Interest)"
SHELDEN = (
    "Blake Griffin : `~has_person`: Oklahoma CityOklahoma City : `~Place of birth`: Shelden WilliamsShelden "
    "Williams : `Place of birth`: Oklahoma City"
)
TREASURE_PLANET = (
    "Ice Age has genre AnimationAnimation has examples: Treasure Planet. Treasure Planet is written by Terry "
    "RossioTreasure Planet was released 2002"
)


@pytest.mark.parametrize(
    ("claim", "knowledge", "verdict"),
    [
        # A genre the knowledge gives another of, in the sentence the claim matches no better than the
        # one it matches best ('Taken is starring Holly Valance'): was 'not found'.
        ("Taken is a romantic comedy film.", TAKEN, "no"),
        ("Taken is a suspense film.", TAKEN, "yes"),
        ("Traffic is a horror movie.", TRAFFIC, "no"),
        ("Its genre is fantasy romance.", TRAFFIC, "no"),  # 'it': the knowledge's only genre
        ("It is horror.", TRAFFIC, "no"),  # a fragment too short for polarity still gives a kind
        ("Traffic is a drama.", TRAFFIC, "yes"),
        ("Shikhar Dhawan is a professional tennis player.", DHAWAN, "no"),
        ("Shikhar Dhawan plays cricket.", DHAWAN, "yes"),
        # 'actually' vouches and states nothing: the rest of the claim matches, the name is another
        ("Shelden Williams was actually born in New York City.", SHELDEN, "no"),
        # 'ago' is the time's, given as a year: '2003' against '2002'
        ("It was released five years ago in 2003.", TREASURE_PLANET, "no"),
    ],
)
async def test_a_value_of_another_kind_contradicts(
    judge: OfflineJudge, claim: str, knowledge: str, verdict: str
) -> None:
    [judged] = await judge.verdicts([claim], [knowledge], VerdictTask.SUPPORTED)
    assert judged.verdict == verdict, judged.reason


async def test_a_kind_given_two_ways_or_in_part_is_no_conflict(judge: OfflineJudge) -> None:
    """'romance' for 'Romantic comedy' gives one of its values; 'a comedy' is one; 'a suspense thriller'
    names the knowledge's value beside another (not found, not contradicted)."""
    romcom = (
        "Kate Hudson starred in How to Lose a Guy in 10 Days. How to Lose a Guy in 10 Days has genre "
        "Romantic comedy"
    )
    claims = [
        "How to Lose a Guy in 10 Days is a romance movie.",
        "How to Lose a Guy in 10 Days is a comedy.",
    ]
    judged = await judge.verdicts(claims, [romcom], VerdictTask.SUPPORTED)
    assert all(v.verdict != "no" for v in judged), [v.reason for v in judged]
    [thriller] = await judge.verdicts(["Taken is a suspense thriller."], [TAKEN], VerdictTask.SUPPORTED)
    assert thriller.verdict == "idk", thriller.reason


def test_kinds_are_exclusive_values_not_synonyms() -> None:
    assert antonym("horror", "drama") and antonym("tennis", "cricket") and antonym("comedies", "thriller")
    # the values either side of a line break in the list ('science-fiction' / 'fantasy', 'rugby' /
    # 'volleyball') were once read as one word
    assert antonym("fantasy", "drama") and antonym("science-fiction", "horror")
    assert antonym("rugby", "tennis") and antonym("volleyball", "golf")
    assert not antonym("romance", "romantic")  # one value, two ways
    assert not antonym("soccer", "football")
    assert not antonym("box", "tennis")  # ('boxing' is not listed: its stem is a box's)


COLLINS = (
    "Catching Fire is written by Suzanne CollinsSuzanne Collins wrote The Hunger Games (Science Fiction "
    "Film). The Hunger Games (Science Fiction Film) is starring Woody HarrelsonThe Hunger Games (Science "
    "Fiction Film) : `~Film Executive Produced`: Suzanne Collins. Suzanne Collins wrote Gregor the Overlander"
)


async def test_a_name_listed_beside_a_known_one_is_an_addition_not_a_swap(judge: OfflineJudge) -> None:
    """'Gregor the Overlander and Mockingjay' reads as one name the knowledge lacks, where it names another
    book: a right response was contradicted. Another author is still a swap."""
    claims = [
        "She wrote Gregor the Overlander and Mockingjay.",
        "Stephenie Meyer wrote Gregor the Overlander.",
    ]
    listed, swapped = await judge.verdicts(claims, [COLLINS], VerdictTask.SUPPORTED)
    assert listed.verdict == "idk", listed.reason
    assert swapped.verdict == "no", swapped.reason


def test_the_pronoun_one_is_no_part_of_the_claim_to_match() -> None:
    """'that one' is the film the window names: the rest of the claim ('directed') matches in full, so
    another director there is a conflict for the contradiction model to weigh (the rest was 0.67)."""
    knowledge = "David O. Russell wrote Three Kings. Three Kings is directed by David O. Russell"
    ev = GroundingFeaturizer().evidence("Steven Spielberg directed that one.", prepare((knowledge,)))
    assert ev.rest_match == 1.0
    assert ev.has_conflict
