"""A bare 'Yes.' or 'No.' to a yes/no question is the statement it makes, checked like any claim."""

from __future__ import annotations

import pytest

from evaluators import Faithfulness, Hallucination, TestCase, evaluate
from evaluators.offline import OfflineJudge
from evaluators.offline.claims import answer_claims
from evaluators.offline.stance import stance_statement


@pytest.mark.parametrize(
    ("question", "reply", "statement"),
    [
        ("Is the Berlin office open on Sundays?", "No.", "The Berlin office is not open on Sundays."),
        ("Is the Berlin office open on Sundays?", "Yes, it is.", "The Berlin office is open on Sundays."),
        ("So, does ibuprofen cause ulcers?", "Yes, it does.", "Ibuprofen does cause ulcers."),
        ("Was the Eiffel Tower built in 1889?", "Yep", "The Eiffel Tower was built in 1889."),
        ("Is Paris the capital of France?", "Correct.", "Paris is the capital of France."),
        ("Can I cancel my plan online?", "No, you cannot.", "You cannot cancel your plan online."),
        ("Does Python 3.12 still have the GIL?", "Yes.", "Python 3.12 does still have the GIL."),
        ("Is The Lord of the Rings a novel?", "Yes", "The Lord of the Rings is a novel."),
        ("Did the band Saosin form in 2003?", "Nope.", "The band Saosin did not form in 2003."),
        ("We moved in May. Is the hotel pool open in winter?", "No", "The hotel pool is not open in winter."),
        # Not read: the reply says more, the question is negated, about the answerer, joins or
        # compares two things, or asks whether something said before is right.
        ("Is it open on Sundays?", "No, it is closed on Sundays.", None),
        ("Isn't the office open on Sundays?", "No.", None),
        ("Have you read The Secret History?", "Yes.", None),
        ("Are Wenling and Jiaxing both in China?", "Yes.", None),
        ("Is the Staffordshire Bull Terrier bigger than the Miniature American Shepherd?", "Yes.", None),
        ("I heard she was also a lawyer. Is that correct?", "Yes.", None),
        ("What time does the office open?", "Yes.", None),
        ("Is the office open on Sundays?", "I'm not sure.", None),
    ],
)
def test_a_bare_reply_states_what_the_question_asks(question: str, reply: str, statement: str | None) -> None:
    assert stance_statement(reply, question) == statement


def test_the_reply_s_statement_opens_the_claims_and_the_rest_follows() -> None:
    claims = answer_claims("No. It opens at 9 am on weekdays.", "Is the Berlin office open on Sundays?")
    assert claims == ["The Berlin office is not open on Sundays.", "It opens at 9 am on weekdays."]
    assert answer_claims("No. It opens at 9 am on weekdays.") == ["It opens at 9 am on weekdays."]


@pytest.mark.parametrize(
    ("question", "reply", "grounded"),
    [
        ("Is the Berlin office open on Sundays?", "Yes.", False),  # the passage says it is closed
        ("Is the Berlin office closed on Sundays?", "Yes.", True),
        ("Is the Berlin office closed on Sundays?", "No.", False),
        ("Does the Berlin office open at 10 am on weekdays?", "Yes, it does.", False),  # at 9 am
        ("Does the Berlin office open at 9 am on weekdays?", "Yes, it does.", True),
    ],
)
def test_a_bare_reply_is_scored_against_the_context(question: str, reply: str, grounded: bool) -> None:
    """Read alone, each reply was unmeasured ('no checkable claim'): a 'Yes' where the passage says
    no could never fail hallucination."""
    hours = [
        "The Berlin office is closed on Sundays and public holidays.",
        "The Berlin office opens at 9 am on weekdays.",
    ]
    case = TestCase(input=question, actual_output=reply, retrieval_context=hours, context=hours)
    scores = evaluate([case], [Faithfulness(), Hallucination()], OfflineJudge()).cases[0].by_name()
    faithfulness, hallucination = scores["faithfulness"], scores["hallucination"]
    assert faithfulness.score == (1.0 if grounded else 0.0), faithfulness.reason
    assert hallucination.passed is grounded, hallucination.reason
