"""Answer relevancy that knows what a question asks for (evaluators/offline/question_type.py, relevance.py).

The scorer tests use a frozen copy of the 'relevant' model that `python scripts/offline_relevance.py`
trains (HaluEval QA training split), so they do not depend on HaluEval nor on the packaged model file.
Measured with it: unresponsive 15/16, responsive 12/13 (tests/data/grounding_cases_unresponsive.jsonl;
both misses are "why" questions, whose reasons are often unmarked), off-topic 9/9; the floors sit just
under these figures.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from evaluators.judges.base import VerdictTask
from evaluators.offline.embedder import WordLlamaEmbedder
from evaluators.offline.grounding_cases import load_cases
from evaluators.offline.idf import default_idf
from evaluators.offline.model import LogisticModel
from evaluators.offline.question_type import AnswerType, asked, bare_stance, looks_english, supplies
from evaluators.offline.relevance import (
    RELEVANCE_FEATURE_NAMES,
    RelevanceScorer,
    relevance_features,
    responsiveness,
    similarity_features,
)

T, Q, PL, PE, PR, R, YN = AnswerType
DATA = Path(__file__).resolve().parents[1] / "data"
RELEVANT = LogisticModel(
    names=RELEVANCE_FEATURE_NAMES,
    weights=(1.918048, 1.26832, 0.420411, 0.345191, -3.610795),
    bias=-1.743867,
    means=(0.131017, 0.094583, 0.104203, 0.501518, 0.122131),
    scales=(0.214217, 0.222867, 0.241011, 0.499998, 0.302266),
)
SIMILARITY = ("cosine", "reference_recall", "item_recall")
USEFUL = LogisticModel(
    SIMILARITY,
    (1.34739, 1.057412, 4.483953),
    2.227832,
    (0.17588, 0.342964, 0.060581),
    (0.220957, 0.44538, 0.121722),
)
# the 'relevant' model as committed before the answer-type features: similarity only
OLD_RELEVANT = LogisticModel(
    SIMILARITY,
    (3.599521, 2.724194, 2.977975),
    4.082144,
    (0.295498, 0.26343, 0.203538),
    (0.302052, 0.341731, 0.291933),
)


@pytest.fixture(scope="module")
def scorer() -> RelevanceScorer:
    return RelevanceScorer({"relevant": RELEVANT, "useful": USEFUL}, WordLlamaEmbedder(), default_idf())


def one(scorer: RelevanceScorer, statement: str, question: str) -> tuple[str, str, float]:
    [verdict] = scorer.verdicts([statement], question, VerdictTask.RELEVANT)
    assert verdict.confidence is not None
    return verdict.verdict, verdict.reason, verdict.confidence


# -- what a question asks -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When is the Berlin office open?", {T}),
        ("What time does the pharmacy close on Saturdays?", {T}),
        ("What are the opening hours of the Berlin office?", {T}),
        ("When's the next release?", {T}),
        ("In which year did Apollo 11 land on the Moon?", {T}),
        ("Since when has the office been open?", {T}),
        ("How early must parental leave be requested?", {T}),
        ("How many days of annual leave do employees get?", {Q}),
        ("How much does the Pro plan cost per month?", {Q}),
        ("What does the Pro plan cost?", {Q}),
        ("What is the maximum daily dose of ibuprofen?", {Q}),
        ("How tall is the Eiffel Tower?", {Q}),
        ("How long does Kafka keep messages by default?", {T, Q}),
        ("How often is the Eiffel Tower repainted?", {T, Q}),
        ("How old do I have to be to rent a car?", {T, Q}),
        ("Where does arabica coffee come from?", {PL}),
        ("Where can I find my invoices?", {PL}),
        ("In what city did Duane Swank get his PhD?", {PL}),
        ("Jaspal Rana won gold at a 1994 event held in what country?", {PL}),
        ("Who approves expense reports?", {PE}),
        ("To whom should I send the form?", {PE}),
        ("Which company makes the Model S?", {PE}),
        ("What is the name of the person who founded Kafka?", {PE}),
        ("How do I reset my password?", {PR}),
        ("How can I configure a readiness probe in Kubernetes?", {PR}),
        ("How to rotate the API keys?", {PR}),
        ("What is the best way to reset my password?", {PR}),
        ("What should I do if my card is stolen?", {PR}),
        ("Why did the 14:05 deploy fail?", {R}),
        ("How come the build is red?", {R}),
        ("What caused the outage?", {R}),
        ("Is autovacuum on by default?", {YN}),
        ("Can I return a gift card?", {YN}),
        ("Does Python 3.12 still have the GIL?", {YN}),
        ("Does the premium plan include dental cover?", {YN}),  # English by its auxiliary and subject
        ("Are the Rolling Stones British?", {YN}),
        ("The office is open on Sundays, right?", {YN}),
        ("Do you know when the office opens?", {T}),  # an indirect question asks its wh-word
        ("Can you tell me how many days of leave I get?", {Q}),
        ("Could you explain why the build failed?", {R}),
        ("Hi, when is the office open?", {T}),
        ("If I cancel, when do I get my refund?", {T}),
        ("When was it completed and how tall is it?", {T, Q}),  # several parts, several types
        ("Who founded Kafka and when?", {PE, T}),
        ("Where and when is the conference?", {PL, T}),
        ("Is it open on Sundays and when does it close?", {YN, T}),
    ],
)
def test_what_a_question_asks(question: str, expected: set[AnswerType]) -> None:
    assert asked(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "What does min.insync.replicas control?",
        "What happens if a group has more consumers than partitions?",
        "When a pod fails, what happens?",  # 'when' opens a clause here, it asks nothing
        "How does autovacuum work?",
        "What is Kafka?",
        "Which planet has the most moons?",
        "Tell me about the Eiffel Tower.",
        "Who was born earlier, Gerina Dunwich or Erich Maria Remarque?",  # a choice: the answer is in it
        "What comedian starred in the film 'Which Way Is Up?'",
        "How do you say 'March' in Anglo-Saxon?",
        "Was ist die Hauptstadt von Deutschland?",
        "Wann ist das Berliner Büro geöffnet?",
        "Will er nach Berlin fahren?",
        "Was ist das Problem?",  # 'was' is an English auxiliary, 'ist' no English subject
        "Is het kantoor open?",
        "¿Cuándo abre la oficina de Berlín?",
        "Когда открыт офис в Берлине?",
        "柏林办公室什么时候开门？",
        "",
    ],
)
def test_unknown_forms_and_other_languages_ask_nothing(question: str) -> None:
    assert asked(question) == frozenset()


def test_english_is_told_from_other_languages_by_function_words_not_names() -> None:
    assert looks_english("Are both Tim McIlrath and Spike Slawson American punk rock musicians?")
    assert not looks_english("Das Büro ist montags bis freitags von 9 bis 18 Uhr geöffnet.")


# -- what a statement supplies --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "question", "kind", "expected"),
    [
        ("The Berlin office is open Monday to Friday from 9 am to 6 pm.", "When is it open?", T, True),
        ("Berlin is the capital of Germany and has 3.7 million inhabitants.", "When is it open?", T, False),
        ("PostgreSQL 16 came out on September 14, 2023.", "When was PostgreSQL 16 released?", T, True),
        ("Apollo 11 landed in 1969.", "What happened in 1969?", T, False),  # the question gives the year
        ("Kafka keeps messages for seven days.", "How long?", T, True),
        ("It is 330 metres tall.", "How tall is the Eiffel Tower?", Q, True),
        ("The tower was completed in 1889.", "How tall is the Eiffel Tower?", Q, False),  # a year, not a size
        ("PostgreSQL 16 is a database.", "How fast is PostgreSQL 16?", Q, False),  # 16 is in the question
        ("Saturn has 146 confirmed moons.", "How many moons does Saturn have?", Q, True),
        ("Arabica coffee is native to the highlands of Ethiopia.", "Where does arabica come from?", PL, True),
        ("Arabica beans taste sweeter than robusta.", "Where does arabica come from?", PL, False),
        ("Your line manager approves them.", "Who approves expense reports?", PE, True),
        ("Expense reports must be submitted within 30 days.", "Who approves expense reports?", PE, False),
        ("Click 'Forgot password' on the sign-in page.", "How do I reset my password?", PR, True),
        ("Run `kubectl rollout undo deployment/web`.", "How do I roll back?", PR, True),
        ("Passwords must be at least 12 characters long.", "How do I reset my password?", PR, False),
        ("The deploy failed because a migration was missing.", "Why did the deploy fail?", R, True),
        ("Deploys run in three stages.", "Why did the deploy fail?", R, False),
        ("No, it is closed at weekends.", "Is the office open on Sundays?", YN, True),
        ("The autovacuum daemon is enabled by default.", "Is autovacuum on by default?", YN, True),
        ("The Berlin office is on the fourth floor.", "Is the Berlin office open on Sundays?", YN, False),
    ],
)
def test_what_a_statement_supplies(statement: str, question: str, kind: AnswerType, expected: bool) -> None:
    assert (kind in supplies(statement, question, default_idf().common)) is expected


def test_a_statement_in_another_language_misses_nothing() -> None:
    fit = responsiveness("Das Büro ist montags bis freitags von 9 bis 18 Uhr geöffnet.", "When is it open?")
    assert fit.asked == {T} and not fit.missed and fit.mismatch == 0.0


def test_a_multi_part_question_is_answered_by_any_of_its_parts() -> None:
    question = "When was the Eiffel Tower completed and how tall is it?"
    assert not responsiveness("It is 330 metres tall.", question).missed
    fit = responsiveness("The tower stands on the Champ de Mars in Paris.", question)
    assert fit.missed and fit.mismatch == 1.0
    expected = (
        "does not say when or give a number or amount: the question asks for a time or date, or a number"
    )
    assert fit.reason().startswith(expected)


def test_a_miss_weighs_as_much_as_its_least_reliable_detector() -> None:
    assert responsiveness("Berlin has 3.7 million inhabitants.", "When is the office open?").mismatch == 1.0
    assert responsiveness("Deploys run in three stages.", "Why did the deploy fail?").mismatch == 0.6


# -- verdicts ----------------------------------------------------------------------------------------


def test_the_issue_example_is_unresponsive_and_says_why(scorer: RelevanceScorer) -> None:
    question = "When is the Berlin office open?"
    verdict, reason, confidence = one(
        scorer, "Berlin is the capital of Germany and has 3.7 million inhabitants.", question
    )
    assert verdict == "no" and reason.startswith("does not say when: the question asks for a time or date")
    assert confidence > 0.5  # P(not relevant)
    verdict, reason, confidence = one(
        scorer, "The Berlin office is open Monday to Friday from 9 am to 6 pm.", question
    )
    assert verdict == "yes" and "gives a time or date" in reason and confidence > 0.9


def test_a_correct_answer_to_a_question_of_unknown_type_passes(scorer: RelevanceScorer) -> None:
    question = "What does min.insync.replicas control?"
    statement = "It sets the minimum number of in-sync replicas that must acknowledge a write."
    assert one(scorer, statement, question)[0] == "yes"


@pytest.mark.parametrize(
    ("statement", "question"),
    [
        (
            "It sets the minimum number of in-sync replicas that must acknowledge a write.",
            "What does min.insync.replicas control?",
        ),
        ("The Pod is removed from the Service endpoints.", "What happens when a readiness probe fails?"),
        (
            "Robusta beans contain about twice as much caffeine.",
            "Which beans have more caffeine, arabica or robusta?",
        ),
        ("Autovacuum removes dead tuples and updates statistics.", "How does autovacuum work?"),
        ("Das Büro ist montags bis freitags geöffnet.", "Wann ist das Berliner Büro geöffnet?"),
    ],
)
def test_unknown_types_never_penalise(scorer: RelevanceScorer, statement: str, question: str) -> None:
    features = relevance_features(statement, question, 0.5, default_idf())
    assert features[RELEVANCE_FEATURE_NAMES.index("type_mismatch")] == 0.0
    _, reason, _ = one(scorer, statement, question)
    assert "the question asks" not in reason


def test_the_hand_written_cases_reach_their_floors(scorer: RelevanceScorer) -> None:
    cases = load_cases(DATA / "grounding_cases_unresponsive.jsonl")
    cases += [c for c in load_cases(DATA / "grounding_cases.jsonl") if c["expect"] == "irrelevant"]
    hits: dict[str, list[bool]] = {}
    for case in cases:
        verdict = one(scorer, case["answer"], case["question"])[0]
        hits.setdefault(case["category"], []).append(
            verdict == ("yes" if case["expect"] == "relevant" else "no")
        )
    assert len(hits["unresponsive"]) >= 8 and len(hits["responsive"]) >= 4
    assert sum(hits["unresponsive"]) >= 14, hits["unresponsive"]
    assert sum(hits["responsive"]) >= 11, hits["responsive"]
    assert all(hits["off_topic"]), hits["off_topic"]


def test_confidence_is_the_probability_of_the_verdict(scorer: RelevanceScorer) -> None:
    yes, no = scorer.verdicts(
        ["Saturn has 146 confirmed moons.", "Saturn's rings are mostly water ice."],
        "How many moons does Saturn have?",
        VerdictTask.RELEVANT,
    )
    assert (yes.verdict, no.verdict) == ("yes", "no")
    assert yes.confidence is not None and no.confidence is not None
    assert f"P={yes.confidence:.2f}" in yes.reason and f"P={1 - no.confidence:.2f}" in no.reason
    assert yes.supporting_ids == (0,) and no.supporting_ids == ()


def test_contentless_items_useful_task_and_a_similarity_only_model(scorer: RelevanceScorer) -> None:
    assert scorer.verdicts([], "When?", VerdictTask.RELEVANT) == []
    [empty] = scorer.verdicts(["..."], "When is it open?", VerdictTask.RELEVANT)
    assert (empty.verdict, empty.confidence) == ("no", 1.0)
    assert empty.reason == "no content; it does not say when: the question asks for a time or date"
    [empty] = scorer.verdicts(["..."], "Tell me about the office.", VerdictTask.RELEVANT)
    assert (empty.verdict, empty.reason) == ("no", "no content")
    useful, useless = scorer.verdicts(
        ["The Eiffel Tower is 330 metres tall and was completed in 1889.", "Tomatoes grow best in full sun."],
        "The tower is 330 metres tall.",
        VerdictTask.USEFUL,
    )
    assert (useful.verdict, useless.verdict) == ("yes", "no") and "useful for the answer" in useful.reason
    old = RelevanceScorer({"relevant": OLD_RELEVANT, "useful": USEFUL}, scorer.embedder, scorer.idf)
    verdict, reason, _ = one(old, "Berlin is the capital of Germany.", "When is the Berlin office open?")
    assert verdict == "yes" and "asks" not in reason  # a model without the type features cannot see it


def test_training_learns_that_a_missed_type_is_not_relevant() -> None:
    """`train_relevance_models` on a small made-up set (HaluEval is not needed to run the tests)."""
    from scripts.offline_relevance import train_relevance_models
    from scripts.offline_training import LabelledAnswer

    rng = random.Random(3)
    items = []
    for pair in range(120):
        name, year, staff = f"Company{pair} Ltd", rng.randint(1900, 2020), rng.randint(20, 900)
        context = f"{name} was founded in {year}. {name} has {staff} employees and makes garden tools."
        question, answer = (
            (f"When was {name} founded?", str(year))
            if pair % 2
            else (f"How many employees does {name} have?", str(staff))
        )
        items += [
            LabelledAnswer("qa", pair, context, question, answer, 1),
            LabelledAnswer("qa", pair, context, question, "unknown", 0),
        ]
    models = train_relevance_models(items, default_idf(), useful_limit=200, verbose=False)
    assert models["relevant"].names == RELEVANCE_FEATURE_NAMES and models["useful"].names == SIMILARITY
    assert models["relevant"].weights[RELEVANCE_FEATURE_NAMES.index("type_mismatch")] < 0


def test_verdicts_score_the_features_training_computes(scorer: RelevanceScorer) -> None:
    """`verdicts` reads the reference once per call and picks features by position: the numbers must be
    those of `relevance_features` / `similarity_features` (what the models are trained on), whatever
    order a model names its features in."""
    idf = default_idf()
    shuffled = LogisticModel(
        tuple(reversed(RELEVANCE_FEATURE_NAMES)),
        tuple(reversed(RELEVANT.weights)),
        RELEVANT.bias,
        tuple(reversed(RELEVANT.means)),
        tuple(reversed(RELEVANT.scales)),
    )
    items = [
        "The Eiffel Tower was completed in 1889.",
        "It is 330 metres tall and stands in Paris.",
        "Berlin is the capital of Germany.",
        "...",
        "Gustave Eiffel's company built it for the World's Fair.",
    ]
    for question in ("When was the Eiffel Tower completed?", "What about the Eiffel Tower?"):
        vectors = scorer.embedder.embed([question, *items])
        cosines = (vectors[1:] @ vectors[0]).astype(float).tolist()
        for model in (RELEVANT, shuffled):
            judged = RelevanceScorer({"relevant": model, "useful": USEFUL}, scorer.embedder, idf)
            for item, cosine, v in zip(
                items, cosines, judged.verdicts(items, question, VerdictTask.RELEVANT), strict=True
            ):
                if v.reason.startswith("no content"):  # '...' is judged without the model
                    continue
                p = RELEVANT.probability(relevance_features(item, question, cosine, idf))
                assert v.confidence == pytest.approx(p if v.verdict == "yes" else 1.0 - p, abs=1e-12)
                if model is RELEVANT:  # the same order: the same bits
                    assert v.confidence == (p if v.verdict == "yes" else 1.0 - p)
    answer = "The tower was finished in 1889 and is 330 metres tall."
    vectors = scorer.embedder.embed([answer, *items])
    cosines = (vectors[1:] @ vectors[0]).astype(float).tolist()
    for item, cosine, v in zip(
        items, cosines, scorer.verdicts(items, answer, VerdictTask.USEFUL), strict=True
    ):
        if v.reason != "no content":
            p = USEFUL.probability(similarity_features(item, answer, cosine, idf))
            assert v.confidence == (p if v.verdict == "yes" else 1.0 - p)


def test_idf_weights_of_known_and_new_stems_are_each_stems_weight() -> None:
    idf = default_idf()
    stems = ("tower", "zzqxv", "paris", "1889", "tower", "complet", "qqzzy")  # unseen ones among them
    assert idf.weights(stems) == tuple(idf.weight(s) for s in stems)
    assert idf.weights(iter(stems)) == idf.weights(stems)  # any iterable


@pytest.mark.parametrize(
    "stance", ["Yes.", "No.", "No, it does not.", "Not really.", "Yeah!", "Absolutely not."]
)
def test_a_bare_stance_answers_a_yes_no_question(scorer: RelevanceScorer, stance: str) -> None:
    """A stance of a few words is relevant to a yes/no question (as deepeval's judge counts it),
    however little of the question it repeats; to any other question it answers nothing."""
    verdict, reason, _ = one(scorer, stance, "Does the plan include dental cover?")
    assert (verdict, reason) == ("yes", "relevant to the question: gives a yes or no")
    verdict, reason, _ = one(scorer, stance, "How many members does the committee have?")
    assert verdict == "no" and "the question asks for a number or amount" in reason


@pytest.mark.parametrize(
    ("statement", "bare"),
    [
        ("Yes.", True),
        ("Nope, sorry.", True),
        ("No, it doesn't.", True),
        ("I don't know.", False),  # no stance: 'n't' alone does not make one here
        ("Okay.", False),
        ("No idea.", False),
        ("Not sure, sorry.", False),
        ("Yes, the premium plan includes dental cover for two cleanings a year.", False),  # judged on content
        ("", False),
    ],
)
def test_bare_stance(statement: str, bare: bool) -> None:
    assert bare_stance(statement) is bare
