"""What HaluEval dialogue's knowledge taught the offline judge. Its knowledge is knowledge-graph
triples concatenated without a space, the next triple starting with the last one's object ('... wrote
The Secret Agent: A Simple TaleThe Secret Agent: A Simple Tale was released 19071907 was the year
...'); 56% of its 10,000 knowledge texts are cut apart. Read as one sentence, a claim matched a run of
glued triples and a year read as the number 19071907. The knowledge below is HaluEval's, verbatim."""

from __future__ import annotations

import pytest

from evaluators.judges.base import VerdictTask
from evaluators.offline import OfflineJudge
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
