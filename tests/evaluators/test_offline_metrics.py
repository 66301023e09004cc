"""The offline judge plugs into every metric through the public API: scores, never NaN, no crash."""

from __future__ import annotations

import math

import pytest

from evaluators import (
    AspectCritique,
    ContextualPrecision,
    Faithfulness,
    GEval,
    Hallucination,
    TestCase,
    create_metric,
    evaluate,
    metric_names,
)
from evaluators.metrics.registry import judged_offline
from evaluators.offline import OfflineJudge
from evaluators.offline.claims import answer_claims

CASE = TestCase(
    input="How tall is the Eiffel Tower and when was it built?",
    # Cited as many RAG apps do: the citation metrics score it, the others read past the markers.
    actual_output=(
        "The Eiffel Tower is 330 metres tall [2]. It was built for the 1889 World's Fair in Paris [1]."
    ),
    retrieval_context=[
        "The Eiffel Tower was built by Gustave Eiffel's company for the 1889 World's Fair in Paris.",
        "The Eiffel Tower is 330 metres tall and was the tallest man-made structure until 1930.",
        "Golden retrievers need at least an hour of exercise every day.",
    ],
    expected_output="The Eiffel Tower is 330 metres tall and was built for the 1889 World's Fair.",
    context=["The Eiffel Tower, completed in 1889 for the World's Fair, is 330 metres tall."],
    retrieved_context_ids=["eiffel-history", "eiffel-height", "dogs"],
    reference_context_ids=["eiffel-height", "eiffel-history"],
)
# Free criteria, safety criteria and conversations: the offline judge answers "idk" rather than guessing.
NEEDS_AN_LLM = {name for name in metric_names() if not judged_offline(name)}
# The offline judge keeps the expected output as one claim ('330 metres tall and was built for the 1889
# World's Fair'; it splits clauses only where each has a subject), and no single passage states both
# halves: the retrieved passages entail no expected claim, so there is nothing to utilise (RAGChecker,
# checking each chunk alone, would find the same).
UNMEASURED_OFFLINE = {"claim_context_utilization": "the retrieved chunks entail no expected-output claim"}


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    return OfflineJudge()


def test_every_registered_metric_scores_a_full_case(judge: OfflineJudge) -> None:
    metrics = [create_metric(name) for name in metric_names()]
    result = evaluate([CASE], metrics, judge)
    for metric_result in result.cases[0].results:
        if metric_result.name in NEEDS_AN_LLM:
            assert metric_result.score is None or math.isfinite(metric_result.score)
            continue
        if metric_result.name in UNMEASURED_OFFLINE:
            assert UNMEASURED_OFFLINE[metric_result.name] in metric_result.reason
            continue
        assert metric_result.outcome in {"passed", "failed"}, (metric_result.name, metric_result.reason)
        assert metric_result.score is not None and math.isfinite(metric_result.score), metric_result.name
    assert result.usage.prompt_tokens == 0 and result.usage.cost_usd == 0.0


def test_faithful_answer_scores_high_and_a_wrong_number_low(judge: OfflineJudge) -> None:
    wrong = CASE.model_copy(update={"actual_output": "The Eiffel Tower is 300 metres tall."})
    result = evaluate([CASE, wrong], [Faithfulness(), Hallucination(), ContextualPrecision()], judge)
    good, bad = (case.by_name() for case in result.cases)
    assert good["faithfulness"].score == 1.0
    assert bad["faithfulness"].score == 0.0
    assert bad["hallucination"].score == 1.0 and good["hallucination"].score == 0.0
    assert good["contextual_precision"].score == 1.0


PLANS = [
    "The Basic plan costs 10 euros per month and includes 2 users. It can be cancelled at any time.",
    "The Premium plan costs 25 euros per month and includes 10 users. It comes with phone support.",
    "Both plans include a 30-day free trial.",
]


def test_hallucination_lays_a_contradiction_at_the_passage_that_states_otherwise(judge: OfflineJudge) -> None:
    """Each claim is judged against all the passages, as faithfulness judges it: the Basic plan's
    passage, which resembles '12 users' only by its template, is not contradicted by it. Judged
    passage by passage, both plan passages were, and both reasons named node 0."""
    answers = {
        "grounded": "The Basic plan costs 10 euros per month. The Premium plan includes 10 users.",
        "one wrong": "The Basic plan costs 10 euros per month. The Premium plan includes 12 users.",
    }
    cases = [
        TestCase(input="What do the plans cost?", actual_output=a, retrieval_context=PLANS)
        for a in answers.values()
    ]
    grounded, wrong = (c.by_name()["hallucination"] for c in evaluate(cases, [Hallucination()], judge).cases)
    assert grounded.score == 0.0 and [v.verdict for v in grounded.verdicts] == ["idk", "idk", "idk"]
    assert wrong.score == pytest.approx(1 / 3) and [v.verdict for v in wrong.verdicts] == [
        "idk",
        "yes",
        "idk",
    ]
    assert 'contradicted by node 1: "The Premium plan costs 25 euros' in wrong.verdicts[1].reason
    assert "it says 10, not 12" in wrong.verdicts[1].reason


OFFICES = [
    "The Lisbon office opens at 9am and closes at 6pm on weekdays.",
    "The Porto office opens at 10am and closes at 5pm on weekdays.",
    "Parking is free for visitors at both offices.",
]


@pytest.mark.parametrize(
    ("answer", "contradicted_by"),
    [
        ("The Lisbon office opens at 9:00 on weekdays.", None),
        ("The Lisbon office closes at 18:00.", None),
        (
            "The Lisbon office opens at 10am on weekdays.",
            'node 0: "The Lisbon office opens at 9am and closes at 6pm',
        ),
        (
            "The Porto office closes at 6 p.m. on weekdays.",
            'node 1: "The Porto office opens at 10am and closes at 5pm',
        ),
    ],
)
def test_office_hours_in_any_spelling_and_a_time_taken_from_the_other_office(
    judge: OfflineJudge, answer: str, contradicted_by: str | None
) -> None:
    """Before, times of day were no quantities: '10am' from the Porto office's hours read as stated,
    and the Lisbon answer passed faithfulness and hallucination."""
    case = TestCase(input="When is the office open?", actual_output=answer, retrieval_context=OFFICES)
    results = evaluate([case], [Faithfulness(), Hallucination()], judge).cases[0].by_name()
    faithfulness, hallucination = results["faithfulness"], results["hallucination"]
    if contradicted_by is None:
        assert faithfulness.score == 1.0 and hallucination.score == 0.0
        return
    assert (
        faithfulness.score == 0.0 and f"contradicted by {contradicted_by}" in faithfulness.verdicts[0].reason
    )
    node = int(contradicted_by.split(":")[0].removeprefix("node "))
    assert [v.verdict == "yes" for v in hallucination.verdicts] == [i == node for i in range(3)]


@pytest.mark.parametrize(
    "opener", ["Absolutely!", "Of course.", "Certainly!", "That is correct.", "No problem!"]
)
def test_a_courteous_opener_is_no_claim(judge: OfflineJudge, opener: str) -> None:
    """LLM replies often open with assent or courtesy: checked as a claim, it made this grounded answer
    half faithful ('Absolutely!' is in no passage)."""
    polite = CASE.model_copy(update={"actual_output": f"{opener} The Eiffel Tower is 330 metres tall."})
    scores = evaluate([polite], [Faithfulness()], judge).cases[0].by_name()
    assert scores["faithfulness"].score == 1.0, scores["faithfulness"].reason


@pytest.mark.parametrize(
    "aside",
    [
        "The Eiffel Tower is 330 metres tall, I highly recommend a visit.",
        "I really liked the Eiffel Tower. It is 330 metres tall.",
        "The Eiffel Tower is 330 metres tall, I'm not sure about its opening hours.",
        "The Eiffel Tower is 330 metres tall, I don't know whether it has a restaurant.",
        "I think the Eiffel Tower is 330 metres tall. I'm not sure.",
        "The Eiffel Tower is 330 metres tall. It is truly amazing!",
        "The Eiffel Tower is 330 metres tall. I don't follow the World's Fair much.",
        "That's right. I've heard the Eiffel Tower is 330 metres tall.",
    ],
)
def test_the_speakers_own_clauses_are_no_facts_to_ground(judge: OfflineJudge, aside: str) -> None:
    """Chat replies add what the speaker likes, recommends, thinks, praises or cannot tell. Checked as facts,
    'I highly recommend a visit' was not found, and 'I don't know whether X' read as a negation that
    contradicts the passage. A taste keeps its names; 'I think X' is X; 'I'm not sure about X' is an
    abstention: right when the context lacks X."""
    case = CASE.model_copy(update={"actual_output": aside})
    result = evaluate([case], [Faithfulness(), Hallucination()], judge).cases[0].by_name()
    assert result["faithfulness"].score == 1.0, result["faithfulness"].reason
    assert result["hallucination"].score == 0.0, result["hallucination"].reason


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("I'm a fan of Stephen King.", ["Stephen King"]),
        ("I am a big fan of Stephen King.", ["Stephen King"]),
        ("I really liked Wild Ones.", ["Wild Ones"]),
        ("I'm totally into dance music.", []),
        ("I'm not sure.", []),
        ("I think the tower is 330 metres tall.", ["The tower is 330 metres tall."]),
        ("We recommend the Premium plan for teams.", ["We recommend the Premium plan for teams."]),
        ("Those are great songs.", []),
        ("Yup. He is a great all around actor.", []),
        ("It is a really fun movie, like Finding Nemo.", ["Finding Nemo"]),
        ("The hotel has a great pool.", ["The hotel has a great pool."]),
        ("I don't follow the Saints much.", ["Saints"]),
        ("I'm sorry, I don't have any more news about Christina Baker Kline.", ["Christina Baker Kline"]),
        ("I read that the tower is 330 metres tall.", ["The tower is 330 metres tall."]),
        ("I read the book in 2010.", []),
        ("I found that the refund takes 14 days.", ["The refund takes 14 days."]),
        ("I have heard of the tower from somewhere.", []),
        ("Yeah the tower is 330 metres tall.", ["The tower is 330 metres tall."]),
        ("No, Robert Downey Jr. isn't in Zodiac.", ["Robert Downey Jr. isn't in Zodiac."]),
        ("No refunds are given after 30 days.", ["No refunds are given after 30 days."]),
        ("Precisely!", []),
        ("I think it's a great movie.", []),
        ("OK Computer is Radiohead's third album.", ["OK Computer is Radiohead's third album."]),
        ("I can confirm that the office opens at 9.", ["The office opens at 9."]),
        ("We offer free returns within 30 days.", ["We offer free returns within 30 days."]),
        ("I could not find the trial's length.", ["I could not find the trial's length."]),
        ("Feel free to contact us if you have any other questions.", []),
        ("Let me know if you need anything else.", []),
        ("My pleasure, let me know if you need more recommendations.", []),
        ("Thanks for the information.", []),
        ("You should definitely give it a watch!", []),
        ("Enjoy the read!", []),
        ("Glad I could help, enjoy Zoolander!", ["Zoolander"]),
        (
            "You should check it out, it falls under the Time travel genre.",
            ["It falls under the Time travel genre."],
        ),
        ("Feel free to contact us at help@example.com.", ["Feel free to contact us at help@example.com."]),
        ("Thanks to the new law, taxes fell.", ["Thanks to the new law, taxes fell."]),
        ("Please reach out to our support team.", ["Please reach out to our support team."]),
        (
            "You should check the Billing tab for invoices.",
            ["You should check the Billing tab for invoices."],
        ),
        ("Enjoy free shipping on all orders.", ["Enjoy free shipping on all orders."]),
        ("Feel free to use the API without limits.", ["Feel free to use the API without limits."]),
    ],
)
def test_what_a_speakers_clause_leaves_to_check(text: str, claims: list[str]) -> None:
    """Tastes, judgements of value and what the speaker says of itself keep their names, a hedge or a
    report its statement; a company's 'we recommend' or 'we offer' may be its policy and stays whole,
    praise of something specific is a fact about it ('a great pool': the hotel has a pool), an
    abstention stays one, and a reply's 'No,' leaves its clause ('No refunds' is a negation).
    Courtesy and advice on what was named keep their names and a fact spliced on; an instruction, an
    offer and an address to write to stay whole ('Thanks to' is a cause; 'Please reach out to our
    support team' may be policy)."""
    assert answer_claims(text) == claims


@pytest.mark.parametrize(
    ("answer", "contradicted"),
    [
        ("No, the Eiffel Tower is 330 metres tall.", False),
        ("Yes, the Eiffel Tower is 330 metres tall.", False),
        ("No, the Eiffel Tower isn't 330 metres tall.", True),
        ("Nope, the Eiffel Tower was not built for the 1889 World's Fair.", True),
    ],
)
def test_a_replys_no_is_no_negation_of_the_clause_after_it(
    judge: OfflineJudge, answer: str, contradicted: bool
) -> None:
    """'No, X' answers the question; counted as a negation of X, it cancelled X's own 'not' (a denial
    of the passage passed) and flipped a plain statement of the passage into a contradiction."""
    case = CASE.model_copy(update={"actual_output": answer})
    result = evaluate([case], [Faithfulness(), Hallucination()], judge).cases[0].by_name()
    faithfulness, hallucination = result["faithfulness"], result["hallucination"]
    if contradicted:
        assert faithfulness.score == 0.0 and "contradicted by" in faithfulness.verdicts[0].reason
        assert hallucination.score is not None and hallucination.score > 0.0, hallucination.reason
    else:
        assert faithfulness.score == 1.0 and hallucination.score == 0.0, faithfulness.reason


@pytest.mark.parametrize(
    "unsure", ["I'm not sure when the Eiffel Tower was built.", "I don't know how tall the Eiffel Tower is."]
)
def test_not_being_sure_of_what_the_context_states_is_unsupported(judge: OfflineJudge, unsure: str) -> None:
    case = CASE.model_copy(update={"actual_output": unsure})
    result = evaluate([case], [Faithfulness()], judge).cases[0].by_name()["faithfulness"]
    assert result.score == 0.0, result.reason


def test_did_you_know_asserts_what_it_asks(judge: OfflineJudge) -> None:
    """'Did you know that X?' states X (chat replies add facts this way); 'Do you know who...?' asks."""
    wrong = CASE.model_copy(
        update={"actual_output": "Did you know that the Eiffel Tower is 300 metres tall?"}
    )
    asking = [
        CASE.model_copy(update={"actual_output": question})
        for question in ("Do you know who built the Eiffel Tower?", "Did you know about the World's Fair?")
    ]
    result = evaluate([wrong, *asking], [Faithfulness()], judge)
    stated, *asked = (case.by_name()["faithfulness"] for case in result.cases)
    assert stated.score == 0.0, stated.reason
    assert all(a.outcome == "unmeasured" for a in asked), [a.reason for a in asked]


def test_custom_criteria_are_unmeasured_naming_the_limitation(judge: OfflineJudge) -> None:
    """Neither an error (nothing failed) nor a silent 0 (an aspect the judge cannot see is not absent)."""
    geval = GEval(name="fact check", criteria="Is the answer grounded?", evaluation_params=["actual_output"])
    aspect = AspectCritique("cites", "Does the answer name its source?")
    results = evaluate([CASE], [geval, aspect], judge).cases[0].results
    for result in results:
        assert result.outcome == "unmeasured" and "offline judge" in (result.reason or ""), result
