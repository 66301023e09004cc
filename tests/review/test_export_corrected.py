"""Reviewers' corrections leave the page as labels: `ragpulse export-cases --corrected` exports the
corrected records with the reviewers' outcome and claim verdicts, `ragpulse eval` measures this run's
judge and production's against them, and the grounding model's training reads their claims."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from collector.commands.cli import main
from collector.exporters.kafka_results import KafkaResultsConfig, KafkaResultsExporter
from collector.exporters.verdicts import VerdictLimits
from collector.page.config import PageConfig
from collector.page.exporter import stored_evaluation
from collector.page.store import Store
from collector.records import RagRecord
from collector.review.corrections import ClaimCorrection, Correction
from collector.stages import Evaluation
from evaluators.offline.sentences import sentences
from scripts.grounding.corrected import corrected_examples, examples
from tests.collector.test_export_cases import export, lines
from tests.page.factories import PASSAGES, QUESTION, faithfulness, make_record, relevancy
from tests.page.test_routes import serve

NOW = time.time()
LIMITS = VerdictLimits()
GROUNDED = "The Eiffel Tower was completed in 1889. It is 330 metres tall."
CLAIMS = ("The Eiffel Tower was completed in 1889.", "It is 512 metres tall.")  # of ANSWER
TRUE_HEIGHT = "It is 330 metres tall."  # GROUNDED's second claim


def correction(
    record: RagRecord,
    evaluation: Evaluation,
    outcome_right: bool | None,
    claims: tuple[tuple[int, str], ...] = (),
    at: float = NOW - 60,
) -> Correction:
    """What the page records when a reviewer marks `evaluation` of `record`."""
    judged = [v.label for v in evaluation.verdicts]
    texts = sentences(record.response)
    return Correction(
        trace_id=record.trace_id,
        span_id=record.anchor_span_id,
        metric=evaluation.metric,
        reviewer="ana",
        corrected_at=at,
        outcome_right=outcome_right,
        claims=tuple(ClaimCorrection(i, verdict, judged[i], None, texts[i]) for i, verdict in claims),
        note=None,
        service=record.service,
        judge=evaluation.judge,
        outcome=evaluation.outcome.value,
        score=evaluation.score,
        threshold=evaluation.threshold,
        lower_is_better=evaluation.lower_is_better,
    )


@pytest.fixture
def reviewed(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A store file and its records' case ids. Five records: the judge right about a false height
    (`wrong`), wrong about a true one (`right`), claims marked only (`claims_only`), corrected two days
    ago (`old`), and one nobody reviewed."""
    records = {
        "wrong": make_record(),
        "right": make_record(answer=GROUNDED),
        "claims_only": make_record(),
        "old": make_record(),
        "unreviewed": make_record(),
    }
    path = tmp_path / "page.db"
    store = Store(path)
    try:
        store.write(
            [
                stored_evaluation(record, evaluation, NOW - (3 * 86400 if name == "old" else 120), LIMITS)
                for name, record in records.items()
                for evaluation in (faithfulness(), relevancy())
            ]
        )  # production failed faithfulness on all five, `right` wrongly so
        faith, relevant = faithfulness(), relevancy()
        store.write_corrections(
            [
                correction(records["wrong"], faith, True, ((1, "contradicted"), (0, "supported"))),
                correction(records["wrong"], relevant, True),
                correction(records["right"], faith, False, ((1, "supported"),)),
                correction(records["claims_only"], faith, None, ((1, "not_found"),)),
                correction(records["old"], faith, False, at=NOW - 2 * 86400),
            ]
        )
    finally:
        store.close()
    return path, {name: f"{r.trace_id}:{r.anchor_span_id}" for name, r in records.items()}


def test_corrected_cases_carry_the_reviewers_labels_and_eval_measures_both_judges_against_them(
    reviewed: tuple[Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path, ids = reviewed
    out = tmp_path / "reviewed.jsonl"
    code, err = export(capsys, "--store", str(store_path), "--corrected", "--since", "1d", "--out", str(out))
    assert code == 0 and err == [f"ragpulse export-cases: wrote 3 corrected cases to {out}"]
    cases = {case["id"]: case for case in lines(out)}
    # not the one corrected two days ago, nor the unreviewed one
    assert set(cases) == {ids["wrong"], ids["right"], ids["claims_only"]}
    right, wrong, claims_only = cases[ids["right"]], cases[ids["wrong"]], cases[ids["claims_only"]]
    assert right["actual_output"] == GROUNDED and right["retrieval_context"] == list(PASSAGES)
    human = right["metadata"]["metrics"]["faithfulness"]["human"]
    assert human["outcome"] == "passed" and human["reviewer"] == "ana"  # production's "failed" was wrong
    assert human["claims"] == [
        {"index": 1, "verdict": "supported", "judge_verdict": "contradicted", "claim": TRUE_HEIGHT}
    ]
    assert human["corrected_at"].endswith("Z")
    assert "human" not in right["metadata"]["metrics"]["answer_relevancy"]  # not corrected
    assert wrong["metadata"]["metrics"]["faithfulness"]["human"]["outcome"] == "failed"
    assert wrong["metadata"]["metrics"]["answer_relevancy"]["human"]["outcome"] == "passed"
    assert claims_only["metadata"]["metrics"]["faithfulness"]["human"]["outcome"] is None
    assert (
        right["metadata"]["metrics"]["faithfulness"]["outcome"] == "failed"
    )  # all outcomes, not failed only

    # The labels travel in every export, --corrected or not.
    code, _ = export(
        capsys, "--store", str(store_path), "--since", "1d", "--out", str(tmp_path / "failed.jsonl")
    )
    failed = lines(tmp_path / "failed.jsonl")
    assert code == 0 and len(failed) == 4
    assert sum("human" in c["metadata"]["metrics"]["faithfulness"] for c in failed) == 3
    # --metric narrows to the corrections of that metric; --since to corrections made since.
    code, err = export(
        capsys, "--store", str(store_path), "--corrected", "--metric", "answer_relevancy", "--since", "1d"
    )
    assert code == 0 and err[-1].endswith("wrote 1 corrected cases to stdout")
    code, err = export(capsys, "--store", str(store_path), "--corrected", "--since", "3d")
    assert code == 0 and err[-1].endswith("wrote 4 corrected cases to stdout")

    # `ragpulse eval` re-judges with the offline judge and measures both judges against the reviewers.
    report = tmp_path / "report.json"
    capsys.readouterr()
    flags = ["--judge", "offline", "--metrics", "faithfulness", "--threshold", "0.7", "--no-progress"]
    code = main(["eval", str(out), *flags, "--json", str(report)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    outcomes = {
        (c["case_id"], r["name"]): r["outcome"]
        for c in json.loads(report.read_text())["cases"]
        for r in c["results"]
    }
    assert outcomes[(right["id"], "faithfulness")] == "passed"  # the offline judge reads 330 metres
    assert outcomes[(wrong["id"], "faithfulness")] == "failed"
    assert json.loads(report.read_text())["reviewers"] == {
        "answer_relevancy": {
            "reviewed": 1,
            "now": {"cases": 0, "same_outcome": 0},  # not re-judged (--metrics faithfulness)
            "production": {"cases": 1, "same_outcome": 1},
        },
        "faithfulness": {
            "reviewed": 2,
            "now": {"cases": 2, "same_outcome": 2},
            "production": {"cases": 2, "same_outcome": 1},
        },
    }
    assert "against reviewers" in printed
    (row,) = [line for line in printed.splitlines() if "faithfulness" in line and "of 2" in line]
    assert "2 of 2 (100.0%)" in row and "1 of 2 (50.0%)" in row


def test_a_store_from_before_corrections_exports_none_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.db"
    store = Store(path)
    store.write([stored_evaluation(make_record(), faithfulness(), NOW - 60, LIMITS)])
    store.close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE corrections")  # as a store file written by an older ragpulse
    code, err = export(capsys, "--store", str(path), "--corrected")
    assert code == 0 and capsys.readouterr().out == ""
    assert err == [
        f"ragpulse export-cases: {path} holds no corrections (written before reviewers could correct)",
        "ragpulse export-cases: wrote 0 corrected cases to stdout",
    ]
    code, err = export(capsys, "--store", str(path))  # the failures still export
    assert code == 0 and err[-1].endswith("wrote 1 failed cases to stdout")


def test_the_grounding_training_reads_the_reviewers_claims(
    reviewed: tuple[Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path, ids = reviewed
    out = tmp_path / "reviewed.jsonl"
    assert export(capsys, "--store", str(store_path), "--corrected", "--out", str(out))[0] == 0
    textless = {  # a case exported from a sidecar with hide_texts: no passages to ground claims in
        "id": "t:s",
        "input": None,
        "actual_output": None,
        "retrieval_context": None,
        "metadata": {
            "metrics": {"faithfulness": {"human": {"claims": [{"index": 0, "verdict": "supported"}]}}}
        },
    }
    with out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(textless) + "\n")
    found = list(examples(out))  # the textless case yields none
    assert sorted((e.item, e.claim, e.label) for e in found) == sorted(
        [
            (ids["wrong"], CLAIMS[0], "supported"),
            (ids["wrong"], CLAIMS[1], "contradicted"),  # the judge was right
            (ids["right"], TRUE_HEIGHT, "supported"),  # the judge was wrong
            (ids["claims_only"], CLAIMS[1], "unsupported"),  # "not stated"
        ]
    )
    assert all(e.passages == PASSAGES and e.question == QUESTION for e in found)
    assert all((e.source, e.group) == ("reviewed", "reviewed") for e in found)
    assert corrected_examples([out, out]) == list(examples(out)) * 2


def test_the_page_api_and_the_results_topic_export_the_corrections_too(
    reviewed: tuple[Path, dict[str, str]],
    kafka_bootstrap: str,
    kafka_topic: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store_path, ids = reviewed
    with serve(PageConfig(store_path=store_path)) as (base, _page):
        code, err = export(capsys, "--url", base, "--corrected", "--out", str(tmp_path / "api.jsonl"))
    assert code == 0, err
    from_api = {case["id"]: case for case in lines(tmp_path / "api.jsonl")}
    assert set(from_api) == {ids["wrong"], ids["right"], ids["claims_only"]}
    assert from_api[ids["right"]]["metadata"]["metrics"]["faithfulness"]["human"]["outcome"] == "passed"

    # Another replica's results and a reviewer's correction, on the results topic.
    topic = kafka_topic()
    exporter = KafkaResultsExporter(KafkaResultsConfig(bootstrap_servers=kafka_bootstrap, topic=topic))
    corrected, unreviewed = make_record(answer=GROUNDED), make_record()
    for record in (corrected, unreviewed):
        exporter.export(record, [faithfulness(), relevancy()])
    exporter.publish_correction(correction(corrected, faithfulness(), False, ((1, "supported"),)))
    assert exporter.force_flush(10)
    exporter.shutdown()
    out = tmp_path / "topic.jsonl"
    code, err = export(
        capsys,
        "--kafka-bootstrap",
        kafka_bootstrap,
        "--results-topic",
        topic,
        "--corrected",
        "--since",
        "1h",
        "--out",
        str(out),
    )
    assert code == 0 and err == [f"ragpulse export-cases: wrote 1 corrected cases to {out}"]
    (case,) = lines(out)
    assert case["id"] == f"{corrected.trace_id}:{corrected.anchor_span_id}"
    human = case["metadata"]["metrics"]["faithfulness"]["human"]
    assert human["outcome"] == "passed" and human["claims"][0]["claim"] == TRUE_HEIGHT
