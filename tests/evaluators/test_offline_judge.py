"""The offline judge implements every operation of the `Judge` protocol, deterministically."""

from __future__ import annotations

import asyncio
import math

import pytest

from evaluators.judges.base import ExtractKind, Judge, VerdictTask
from evaluators.offline import OfflineJudge
from evaluators.scores import UndefinedScoreError

NODES = [
    "The Eiffel Tower was built by Gustave Eiffel's company for the 1889 World's Fair in Paris. "
    "It is 330 metres tall.",
    "About 7 million people visit the tower every year. The tower is repainted every seven years.",
]


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    return OfflineJudge()


def test_satisfies_the_protocol_and_names_itself(judge: OfflineJudge) -> None:
    assert isinstance(judge, Judge)
    assert judge.info.judge == "offline"
    assert judge.info.model == "ragpulse-grounding-v2+wordllama"


async def test_claims_are_sentences_split_into_clauses(judge: OfflineJudge) -> None:
    answer = "Paris is the capital of France, and Lyon is its third largest city. Is that right? Thanks!"
    claims = await judge.extract(answer, ExtractKind.CLAIMS)
    assert claims == ["Paris is the capital of France.", "Lyon is its third largest city."]
    assert await judge.extract(answer, ExtractKind.CLAIMS, limit=1) == ["Paris is the capital of France."]


async def test_truths_come_most_informative_first_and_entities_include_numbers(judge: OfflineJudge) -> None:
    truths = await judge.extract(" ".join(NODES), ExtractKind.TRUTHS, limit=2)
    assert truths[0].startswith("The Eiffel Tower was built")
    entities = await judge.extract(NODES[0], ExtractKind.ENTITIES)
    assert {"Eiffel Tower", "Gustave Eiffel", "Paris", "1889", "330"} <= set(entities)


async def test_supported_claim_names_its_node_and_a_calibrated_confidence(judge: OfflineJudge) -> None:
    [verdict] = await judge.verdicts(["The Eiffel Tower is 330 metres tall."], NODES, VerdictTask.SUPPORTED)
    assert verdict.verdict == "yes"
    assert verdict.supporting_ids == (0,)
    assert verdict.confidence is not None and 0.5 <= verdict.confidence <= 1.0


async def test_wrong_number_and_wrong_name_are_named_in_the_reason(judge: OfflineJudge) -> None:
    number, name = await judge.verdicts(
        ["The Eiffel Tower is 300 metres tall.", "The Eiffel Tower was built by Auguste Rodin's company."],
        NODES,
        VerdictTask.SUPPORTED,
    )
    assert number.verdict == "no" and "300" in number.reason and "330" in number.reason
    assert number.supporting_ids == (0,)  # the passage that says otherwise
    assert name.verdict == "no" and "Auguste Rodin" in name.reason
    [contradicted] = await judge.verdicts(
        ["The Eiffel Tower is 300 metres tall."], NODES, VerdictTask.CONTRADICTED
    )
    assert contradicted.verdict == "yes"


async def test_a_name_written_another_way_is_no_swap_but_one_made_of_scattered_words_is(
    judge: OfflineJudge,
) -> None:
    """'Intel's CEO' is the passage's 'Intel CEO' (its stems, in a row): it was called contradicted,
    as a name swap. 'Mangalia University' is no name there, though both its words are."""
    forum = "At the developers forum in China, Intel CEO Brian Krzanich demonstrated a swarm of robot spiders"
    [same] = await judge.verdicts(
        ["Intel's CEO demonstrated the robot spiders at a forum in China."], [forum], VerdictTask.SUPPORTED
    )
    assert same.verdict == "yes", same.reason
    born = "Born in Mangalia and raised in Neptun, she studied political science at Ovidius University."
    [made_up] = await judge.verdicts(["She studied at Mangalia University."], [born], VerdictTask.SUPPORTED)
    assert made_up.verdict != "yes" and "Mangalia University" in made_up.reason, made_up.reason


FILM = "Noah Emmerich starred in Windtalkers. Windtalkers was directed by John Woo."
PANEL = "The review panel includes Dr James Chen and Dr Aiko Sato. The panel is chaired by Dr James Chen."
ALBUM = (
    '"I\'m Not the One" is a song by the American rock band The Cars, from their fourth album, "Shake It Up".'
)
SONG = 'The song "I\'m Not the One" is included in the album "Candy-O".'


@pytest.mark.parametrize(
    ("claim", "passage", "verdict"),
    [
        ("Joe Turkel also starred in The Shining.", "Joe Turkel starred in Village of the Giants.", "idk"),
        ("Joe Turkel starred in The Shining.", "Joe Turkel starred in Village of the Giants.", "idk"),
        ("Windtalkers is starring Frances O'Connor.", FILM, "idk"),  # was called contradicted
        ("The review panel includes Dr Maria Lopez.", PANEL, "idk"),  # was called contradicted
        ("Windtalkers was directed by Frances O'Connor.", FILM, "no"),  # a role that holds one
        ("The review panel is chaired by Dr Maria Lopez.", PANEL, "no"),
        (SONG, ALBUM, "no"),  # the part's side of inclusion: another album is a swap
    ],
)
async def test_a_name_added_to_what_holds_many_is_an_addition_not_a_swap(
    judge: OfflineJudge, claim: str, passage: str, verdict: str
) -> None:
    """A name the passage does not give, where it names another, is a swap ('built by Auguste Rodin's
    company'), unless the claim adds one more: it says so ('also'), or its relation holds many (a cast,
    what a whole includes). Then the name is not found, not contradicted. A role that holds one (who
    directed, who chairs) and the album a song is included in still swap."""
    [judged] = await judge.verdicts([claim], [passage], VerdictTask.SUPPORTED)
    assert judged.verdict == verdict, judged.reason
    if verdict == "idk":
        assert "not found" in judged.reason, judged.reason


HOURS = "The Berlin office is open Monday to Friday from 9 am."
CAST = "Three Kings is starring Jamie Kennedy."


@pytest.mark.parametrize(
    ("claim", "passage", "verdict"),
    [
        ("The Berlin office is not open on Sundays.", HOURS, "idk"),  # another day: was contradicted
        ("The Berlin office is open on Sundays.", HOURS, "no"),  # a day the passage's list leaves out
        ("The Berlin office is open on Sundays.", "The Berlin office is not open on Mondays.", "idk"),
        ("Jamie Kennedy did not star in GoldenEye.", CAST, "idk"),  # another film: was contradicted
        ("Jamie Kennedy did not star in Three Kings.", CAST, "no"),  # denies what the passage states
    ],
)
async def test_a_negation_about_a_name_the_other_side_lacks_is_no_contradiction(
    judge: OfflineJudge, claim: str, passage: str, verdict: str
) -> None:
    """A negation denies what follows it: when that names something the other side does not state,
    the two speak of different things (it was called the opposite)."""
    [judged] = await judge.verdicts([claim], [passage], VerdictTask.SUPPORTED)
    assert judged.verdict == verdict, judged.reason


async def test_a_negated_antonym_restates_rather_than_contradicts(judge: OfflineJudge) -> None:
    """'is not open on Sundays' says what 'is closed on Sundays' says: it was called contradicted
    twice over (a negation and an antonym). Either alone is still the opposite."""
    claims = [
        "The Berlin office is not open on Sundays.",
        "The Berlin office is open on Sundays.",
        "The Berlin office is not closed on Sundays.",
    ]
    restated, opposite, denied = await judge.verdicts(
        claims, ["The Berlin office is closed on Sundays."], VerdictTask.SUPPORTED
    )
    assert restated.verdict == "yes", restated.reason
    assert opposite.verdict == "no" and denied.verdict == "no", (opposite.reason, denied.reason)


SMOKING = "Can I smoke on the premises?"


@pytest.mark.parametrize(
    ("question", "answer", "passage", "verdict"),
    [
        (SMOKING, "Smoking is not allowed on the premises.", "Smoking is prohibited on the premises.", "yes"),
        (SMOKING, "Smoking is prohibited on the premises.", "Smoking is not allowed on the premises.", "yes"),
        (
            "Can I get a refund on an ebook?",
            "Refunds are not available for digital downloads.",
            "The refund is unavailable for digital downloads.",
            "yes",
        ),
        (
            "Do managers get overtime pay?",
            "Managers are unpaid for overtime.",
            "Overtime is not paid for managers.",
            "yes",
        ),
        (SMOKING, "Smoking is allowed on the premises.", "Smoking is prohibited on the premises.", "no"),
        (SMOKING, "Smoking is not prohibited here.", "Smoking is not allowed here.", "no"),
    ],
)
async def test_an_antonym_under_the_other_polarity_is_the_claim_s_word(
    judge: OfflineJudge, question: str, answer: str, passage: str, verdict: str
) -> None:
    """'not allowed' says 'prohibited': the four paraphrases were judged not found (the antonym was no
    match for the claim's word). Under the same polarity an antonym is still the opposite."""
    claims = await judge.extract(answer, ExtractKind.CLAIMS, question=question)
    [judged] = await judge.verdicts(claims, [passage], VerdictTask.SUPPORTED)
    assert judged.verdict == verdict, judged.reason


DASHBOARD = "The old dashboard is no longer available since May 2024."


@pytest.mark.parametrize(
    ("claim", "passage", "contradicted"),
    [
        ("The old dashboard was retired in May 2024.", DASHBOARD, False),
        ("Students do not pay an entry fee.", "Entry is free for students.", False),
        ("The shuttle did not run on Sunday.", "The shuttle service was suspended on Sunday.", False),
        ("There is no ferry this weekend.", "The ferry to the island is cancelled this weekend.", False),
        ("The protest did not stop the vote.", "The protest stopped the vote.", True),
        ("The match was not delayed by rain.", "The match was cancelled after it was delayed by rain.", True),
        ("The old dashboard remains available.", DASHBOARD, True),
    ],
)
async def test_a_negation_said_with_a_word_that_negates_is_no_opposite(
    judge: OfflineJudge, claim: str, passage: str, contradicted: bool
) -> None:
    """'retired' says 'no longer available', 'free' 'do not pay': the first four were contradicted (the
    negation flip). Where the word that negates is itself what is denied ('stopped'), or the denied
    words are all stated ('delayed by rain'), the negation still says the opposite."""
    [judged] = await judge.verdicts([claim], [passage], VerdictTask.SUPPORTED)
    assert (judged.verdict == "no") is contradicted, judged.reason


async def test_a_sentence_that_denies_all_the_claim_denies_agrees_whatever_else_it_negates(
    judge: OfflineJudge,
) -> None:
    """'cannot be done without rezoning parks due to rising land values' holds two negations, 'cannot be
    done due to rising land values' one: a real summary's claim was contradicted for the parity. A
    sentence denying it of something else is no agreement ('The tunnel did not open')."""
    plan = ["Locals believe the plan cannot be done without rezoning parks due to rising land values."]
    [same] = await judge.verdicts(
        ["The plan cannot be done due to rising land values."], plan, VerdictTask.SUPPORTED
    )
    assert same.verdict == "yes", same.reason
    bridge = ["The bridge opened in 2010. The tunnel did not open."]
    [other] = await judge.verdicts(["The bridge did not open."], bridge, VerdictTask.SUPPORTED)
    assert other.verdict == "no", other.reason


async def test_an_antonym_in_the_sentence_about_the_claim_s_names_is_seen(judge: OfflineJudge) -> None:
    """'open on Sundays' against 'closed on Sundays. It opens at 9 am on weekdays': the pair window
    holds 'opens' too, and the claim was judged supported. A claim with amounts is left to the window
    ('closes at 19:00' is the end of 'open from 9am to 7pm')."""
    hours = ["The Berlin office is closed on Sundays and public holidays. It opens at 9 am on weekdays."]
    [open_sunday] = await judge.verdicts(
        ["The Berlin office is open on Sundays."], hours, VerdictTask.SUPPORTED
    )
    assert open_sunday.verdict == "no" and "'closed'" in open_sunday.reason, open_sunday.reason
    store = ["Our Lisbon store is open from 9am to 7pm, Monday to Saturday. It is closed on Sundays."]
    [closing_time] = await judge.verdicts(
        ["The Lisbon store closes at 19:00 from Monday to Saturday."], store, VerdictTask.SUPPORTED
    )
    assert closing_time.verdict == "yes", closing_time.reason


async def test_an_antonym_said_of_a_pronoun_s_subject_is_seen(judge: OfflineJudge) -> None:
    """'Our Lisbon store is open ... Monday to Saturday. It is closed on Sundays': 'It' is the store, so
    'open on Sundays' is contradicted (it was supported: 'open' is in the first sentence), and 'not
    open on Sundays' agrees. The pronoun's sentence must state a word of the claim that the first one
    lacks: 'It is closed for lunch' says nothing of weekdays."""
    store = "Our Lisbon store is open from 9am to 7pm, Monday to Saturday. It is closed on Sundays."
    opposite, agrees = await judge.verdicts(
        ["The Lisbon store is open on Sundays.", "The Lisbon store is not open on Sundays."],
        [store],
        VerdictTask.SUPPORTED,
    )
    assert opposite.verdict == "no" and "'closed'" in opposite.reason, opposite.reason
    assert agrees.verdict == "yes", agrees.reason
    lunch = "Our Lisbon store is open from 9am to 7pm, Monday to Saturday. It is closed for lunch."
    [weekdays] = await judge.verdicts(
        ["The Lisbon store is open on weekdays."], [lunch], VerdictTask.SUPPORTED
    )
    assert weekdays.verdict == "idk", weekdays.reason


async def test_unsupported_addition_is_not_called_a_contradiction(judge: OfflineJudge) -> None:
    claim = "Its elevators were supplied by the Otis Elevator Company."
    [supported] = await judge.verdicts([claim], NODES, VerdictTask.SUPPORTED)
    [contradicted] = await judge.verdicts([claim], NODES, VerdictTask.CONTRADICTED)
    assert supported.verdict == "idk"  # not found, where a swapped number above is "no": contradicted
    assert contradicted.verdict == "idk"


async def test_relevance_from_embeddings(judge: OfflineJudge) -> None:
    question = "How tall is the Eiffel Tower?"
    on_topic, off_topic = await judge.verdicts(
        ["The Eiffel Tower is 330 metres tall.", "Golden retrievers love to swim."],
        [question],
        VerdictTask.RELEVANT,
    )
    assert (on_topic.verdict, off_topic.verdict) == ("yes", "no")
    useful, useless = await judge.verdicts(
        [NODES[0], "Tomatoes grow best in full sun."], ["The tower is 330 metres tall."], VerdictTask.USEFUL
    )
    assert (useful.verdict, useless.verdict) == ("yes", "no")


async def test_free_criteria_get_idk_and_rubrics_are_undefined(judge: OfflineJudge) -> None:
    """Custom criteria under the offline judge are `unmeasured` (undefined), never a judge error or a 0."""
    [verdict] = await judge.verdicts(["Some answer."], ["Is it polite?"], VerdictTask.SATISFIES)
    assert verdict.verdict == "idk" and "LLM judge" in verdict.reason
    with pytest.raises(UndefinedScoreError, match="cannot"):
        await judge.evaluation_steps("correctness")
    with pytest.raises(UndefinedScoreError, match="cannot"):
        await judge.rubric_score(["step"], {"output": "x"})


async def test_questions_return_the_answer_and_flag_noncommittal(judge: OfflineJudge) -> None:
    answer = "The tower is 330 metres tall."
    assert (await judge.questions(answer)).questions == (answer,)
    assert (await judge.questions("I don't know, the context does not say.")).noncommittal


async def test_embeddings_are_unit_vectors_and_usage_counts_calls_only(judge: OfflineJudge) -> None:
    before = judge.usage().calls
    vectors = await judge.embed(["one text", "another text"])
    assert len(vectors) == 2 and all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-4) for v in vectors)
    usage = judge.usage()
    assert usage.calls == before + 1
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cost_usd) == (0, 0, 0.0)


async def test_degenerate_inputs_give_verdicts_not_errors(judge: OfflineJudge) -> None:
    assert await judge.verdicts([], NODES, VerdictTask.SUPPORTED) == []
    [no_refs] = await judge.verdicts(["A claim."], [], VerdictTask.SUPPORTED)
    assert no_refs.verdict == "idk"
    [empty] = await judge.verdicts(["", "   "][:1], NODES, VerdictTask.SUPPORTED)
    assert empty.verdict == "idk"
    assert await judge.extract("", ExtractKind.CLAIMS) == []


async def test_deterministic_and_safe_under_concurrency(judge: OfflineJudge) -> None:
    claims = ["The Eiffel Tower is 330 metres tall.", "It was built for the 1900 World's Fair."]
    runs = await asyncio.gather(*(judge.verdicts(claims, NODES, VerdictTask.SUPPORTED) for _ in range(8)))
    assert all(run == runs[0] for run in runs)


async def test_a_question_given_to_extract_makes_restated_words_neutral(judge: OfflineJudge) -> None:
    question = "Which company built the Eiffel Tower for the World's Fair?"
    claims = await judge.extract(
        "Gustave Eiffel's company built the Eiffel Tower.", ExtractKind.CLAIMS, question=question
    )
    [verdict] = await judge.verdicts(claims, NODES, VerdictTask.SUPPORTED)
    assert verdict.verdict == "yes"


@pytest.mark.parametrize(
    "passage",
    [
        "min.insync.replicas sets the minimum number of replicas that must acknowledge an acks=all write.",
        "It sets the minimum number of in sync replicas that must acknowledge an acks=all write.",
    ],
)
async def test_a_hyphenated_word_meets_its_joined_and_its_spaced_spelling(
    judge: OfflineJudge, passage: str
) -> None:
    claim = "It sets the minimum number of in-sync replicas that must acknowledge an acks=all write."
    [verdict] = await judge.verdicts([claim], [passage], VerdictTask.SUPPORTED)
    assert verdict.verdict == "yes", verdict.reason


async def test_a_joined_word_does_not_support_an_unrelated_part(judge: OfflineJudge) -> None:
    """Only the claim's own compound is joined: 'sync' alone is not found in 'insync' ('in-sync' is)."""
    claim = "Replicas sync every second with the leader."
    [verdict] = await judge.verdicts(
        [claim], ["The leader keeps the insync replica set."], VerdictTask.SUPPORTED
    )
    assert verdict.verdict != "yes", verdict.reason
