"""`ragpulse export-cases`: failures of live traffic, from the store, the results topic or a running
sidecar's page API, become JSONL test cases that `ragpulse eval` reads back and fails again."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from kafka import KafkaProducer
from pydantic import SecretStr

from collector.commands.cli import main
from collector.commands.export_cases import case_from_record, case_line, since_timestamp
from collector.exporters.kafka_results import KafkaResultsConfig, KafkaResultsExporter, rfc3339
from collector.judging.build import build_offline_judge
from collector.judging.evaluator import RecordEvaluator
from collector.judging.scorers import JudgeOnLoop
from collector.page.app import Page
from collector.page.config import PageConfig
from collector.records import RagRecord
from collector.stages import Evaluation
from evaluators import Outcome, create_metric, evaluate
from evaluators.dataset import load_cases, production_result
from evaluators.offline import OfflineJudge
from testkit.collector_runner import wait_for
from testkit.judges import NoCallsJudge
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess, free_port
from testkit.rag_traces import RagCase, encode, make_spans
from tests.page.factories import ANSWER, PASSAGES, QUESTION, faithfulness, make_record, relevancy
from tests.page.test_routes import serve

GROUNDED = "The Eiffel Tower was completed in 1889. It is 330 metres tall."
METRICS = ["faithfulness", "answer_relevancy"]
THRESHOLDS = {"faithfulness": {"threshold": 0.7}}  # one contradicted claim in two fails


def offline_evaluations(record: RagRecord) -> list[Evaluation]:
    """What the sidecar's evaluate stage makes of `record` with the offline judge."""
    evaluator = RecordEvaluator(JudgeOnLoop(build_offline_judge(), THRESHOLDS))
    evaluations, _ = asyncio.run(evaluator.evaluate(record, METRICS))
    return evaluations


def export(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    """`ragpulse export-cases ARGS` in this process: exit code and stderr lines."""
    capsys.readouterr()
    code = main(["export-cases", *args])
    return code, capsys.readouterr().err.splitlines()


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_store_failures_replay_as_failures_in_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path = tmp_path / "page.db"
    page = Page(PageConfig(store_path=store_path))  # the sidecar's page, still writing while we export
    bad, good, other = make_record(), make_record(answer=GROUNDED), make_record(service="wiki")
    for record in (bad, good, other):
        page.exporter.export(record, offline_evaluations(record))
    assert page.exporter.force_flush(10)
    out = tmp_path / "cases.jsonl"
    try:
        code, err = export(
            capsys,
            "--store",
            str(store_path),
            "--metric",
            "faithfulness",
            "--service",
            "shop",
            "--out",
            str(out),
        )
        assert code == 0 and err == ["ragpulse export-cases: wrote 1 failed cases to " + str(out)]
        (case,) = lines(out)
        assert case["id"] == f"{bad.trace_id}:{bad.anchor_span_id}"
        assert (case["input"], case["actual_output"], case["retrieval_context"]) == (
            QUESTION,
            ANSWER,
            list(PASSAGES),
        )
        meta = case["metadata"]
        assert (meta["trace_id"], meta["span_id"], meta["service"], meta["route"], meta["model"]) == (
            bad.trace_id,
            bad.anchor_span_id,
            "shop",
            "/ask",
            "gpt-4o-mini",
        )
        assert meta["judge"] == "offline" and meta["failed_metrics"] == ["faithfulness"]
        assert meta["passage_ids"] == ["eiffel-0", "eiffel-1", "eiffel-2"]
        assert case["retrieved_context_ids"] == ["eiffel-0", "eiffel-1", "eiffel-2"]
        assert meta["retriever_scores"] == [0.9, 0.8, 0.7]
        faith = meta["metrics"]["faithfulness"]
        assert faith["outcome"] == "failed" and faith["threshold"] == 0.7 and faith["score"] == 0.5
        assert faith["cause"] == "contradicted_claim" and "512" in faith["reason"]
        assert {"kind": "claim", "verdict": "contradicted", "item": "It is 512 metres tall."}.items() <= (
            faith["verdicts"][1].items()
        )
        assert meta["metrics"]["answer_relevancy"]["outcome"] == "passed"  # the record's other metrics too

        # `ragpulse eval`'s reader and evaluator with the offline judge: the same failure, the same score.
        cases = load_cases(out)
        metric = create_metric("faithfulness", threshold=faith["threshold"])
        (result,) = evaluate(cases, [metric], OfflineJudge()).cases[0].results
        assert (result.outcome, result.score) == (Outcome.FAILED, faith["score"])

        # --all: every sampled record, newest first; --limit keeps the newest.
        code, err = export(capsys, "--store", str(store_path), "--all", "--out", str(out))
        assert code == 0 and err[-1].endswith(f"wrote 3 sampled cases to {out}")
        assert [c["metadata"]["trace_id"] for c in lines(out)] == [r.trace_id for r in (other, good, bad)]
        code, _ = export(capsys, "--store", str(store_path), "--all", "--limit", "1", "--out", str(out))
        assert [c["metadata"]["trace_id"] for c in lines(out)] == [other.trace_id]
    finally:
        page.close()
        page.store.close()
    # After the sidecar stopped, to stdout; nothing matches a route nobody called, nor an old window.
    assert export(capsys, "--store", str(store_path), "--route", "/nowhere")[1][-1].endswith(
        "wrote 0 failed cases to stdout"
    )
    code = main(["export-cases", "--store", str(store_path), "--metric", "faithfulness,answer_relevancy"])
    captured = capsys.readouterr()
    assert code == 0 and [json.loads(line)["id"] for line in captured.out.splitlines()] == [
        f"{r.trace_id}:{r.anchor_span_id}" for r in (other, bad)
    ]
    since = rfc3339(time.time() + 3600)
    assert export(capsys, "--store", str(store_path), "--since", since)[1][-1].endswith(
        "wrote 0 failed cases to stdout"
    )


def test_results_topic_on_a_real_broker(
    kafka_bootstrap: str, kafka_topic: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = kafka_topic(partitions=2)
    results = KafkaResultsConfig(bootstrap_servers=kafka_bootstrap, topic=topic)
    failing, passing, hidden, other = (make_record(service_version="v2") for _ in range(4))
    exporter = KafkaResultsExporter(results)
    exporter.export(failing, [faithfulness(0.5), relevancy()])
    exporter.export(passing, [faithfulness(0.9), relevancy()])
    exporter.export(make_record(service="wiki"), [faithfulness(0.5)])
    assert exporter.force_flush(10)
    exporter.shutdown()
    private = KafkaResultsExporter(results, hide_texts=True)  # another replica, with hide_texts
    private.export(hidden, [faithfulness(0.2)])
    assert private.force_flush(10)
    private.shutdown()
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    stale = {  # a failure of three hours ago: before --since
        "trace_id": other.trace_id,
        "span_id": other.anchor_span_id,
        "metric": "faithfulness",
        "outcome": "failed",
        "evaluated_at": rfc3339(time.time() - 3 * 3600),
    }
    producer.send(topic, json.dumps(stale).encode(), timestamp_ms=int((time.time() - 3 * 3600) * 1000))
    producer.send(topic, b"not a result")
    producer.flush()
    producer.close()

    out = tmp_path / "from-topic.jsonl"
    args = [
        "--kafka-bootstrap",
        kafka_bootstrap,
        "--results-topic",
        topic,
        "--since",
        "1h",
        "--out",
        str(out),
    ]
    code, err = export(capsys, *args, "--service", "shop")
    assert code == 0, err
    assert err == [
        f"ragpulse export-cases: 1 messages on {topic} were not results documents (skipped)",
        "ragpulse export-cases: 1 of 2 cases carry no question, answer or passages (the sidecar ran with "
        "hide_texts): `ragpulse eval` will mark them unmeasured",
        f"ragpulse export-cases: wrote 2 failed cases to {out}",
    ]
    cases = {c["metadata"]["trace_id"]: c for c in lines(out)}
    assert set(cases) == {failing.trace_id, hidden.trace_id}
    case = cases[failing.trace_id]
    assert case["input"] == QUESTION and case["actual_output"] == ANSWER
    assert case["retrieval_context"] == list(PASSAGES)
    assert set(case["metadata"]["metrics"]) == {"faithfulness", "answer_relevancy"}
    assert case["metadata"]["failed_metrics"] == ["faithfulness"]
    assert case["metadata"]["metrics"]["faithfulness"]["verdicts"][1]["verdict"] == "contradicted"
    assert case["metadata"]["service_version"] == "v2" and "prompt_version" not in case["metadata"]
    blind = cases[hidden.trace_id]
    assert blind["input"] is None and blind["actual_output"] is None and blind["retrieval_context"] is None
    assert blind["metadata"]["passage_ids"] == ["eiffel-0", "eiffel-1", "eiffel-2"]
    assert [v["verdict"] for v in blind["metadata"]["metrics"]["faithfulness"]["verdicts"]] == [
        "supported",
        "contradicted",
    ]
    loaded = {c.id: c for c in load_cases(out)}
    assert loaded[case["id"]].retrieval_context == list(PASSAGES)
    # Without --since's window the stale failure is there too.
    code, _ = export(capsys, *args[:4], "--since", "4h", "--metric", "faithfulness", "--out", str(out))
    assert code == 0 and other.trace_id in {c["metadata"]["trace_id"] for c in lines(out)}


def test_hide_texts_exports_ids_scores_and_labels_and_eval_marks_them_unmeasured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path = tmp_path / "page.db"
    page = Page(PageConfig(store_path=store_path), hide_texts=True)
    record = make_record()
    page.exporter.export(record, offline_evaluations(record))
    assert page.exporter.force_flush(10)
    page.close()
    page.store.close()
    out = tmp_path / "hidden.jsonl"
    code, err = export(capsys, "--store", str(store_path), "--out", str(out))
    assert code == 0 and len(err) == 2
    assert "1 of 1 cases carry no question, answer or passages" in err[0] and "unmeasured" in err[0]
    (case,) = lines(out)
    assert (case["input"], case["actual_output"], case["retrieval_context"]) == (None, None, None)
    faith = case["metadata"]["metrics"]["faithfulness"]
    assert faith["score"] == 0.5 and faith["reason"] is None
    assert [{k: v for k, v in verdict.items() if k != "confidence"} for verdict in faith["verdicts"]] == [
        {"kind": "claim", "verdict": "supported", "passages": [0]},
        {"kind": "claim", "verdict": "contradicted", "passages": [1]},
    ]
    assert all(0.5 <= verdict["confidence"] <= 1 for verdict in faith["verdicts"])  # the judge's own
    (result,) = evaluate(load_cases(out), [create_metric("faithfulness")], OfflineJudge()).cases[0].results
    assert result.outcome is Outcome.UNMEASURED


def test_page_api_of_a_served_page_with_a_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(PageConfig(token=SecretStr("t0ken"))) as (base, page):
        record = make_record()
        page.exporter.export(record, [faithfulness(), relevancy()])
        page.exporter.export(make_record(), [faithfulness(0.9), relevancy()])
        assert page.exporter.force_flush(5)
        out = tmp_path / "api.jsonl"
        monkeypatch.delenv("RAGPULSE_PAGE__TOKEN", raising=False)
        code, err = export(capsys, "--url", base, "--out", str(out))
        assert code == 2 and err == [
            f"ragpulse export-cases: {base}: the page wants a token (the --token-env variable)"
        ]
        assert not out.exists()  # never a half-written file
        monkeypatch.setenv("PAGE_TOKEN", "t0ken")
        code, err = export(
            capsys, "--url", base, "--token-env", "PAGE_TOKEN", "--since", "30m", "--out", str(out)
        )
        assert code == 0 and err == [f"ragpulse export-cases: wrote 1 failed cases to {out}"]
        (case,) = lines(out)
        assert case["id"] == f"{record.trace_id}:{record.anchor_span_id}" and case["input"] == QUESTION
        assert case["retrieval_context"] == list(PASSAGES)
        assert case["metadata"]["metrics"]["faithfulness"]["cause"] == "contradicted_claim"
        assert load_cases(out)[0].actual_output == ANSWER


def test_a_running_sidecar_by_its_store_and_its_page_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path = tmp_path / "page.db"
    env = {"RAGPULSE_PAGE__STORE_PATH": str(store_path), "RAGPULSE_PAGE__TOKEN": "s3cret"}
    invented = RagCase(response="The Eiffel Tower is 512 metres tall.", route="/invented")
    with RagpulseProcess("--quiet-period", "0.2", "--quiet", env=env) as ragpulse:
        for case in (invented, RagCase()):
            assert post_traces(ragpulse.otlp_port, encode(make_spans("ragpulse", case, "shop")))[0] == 200
        headers = {"Authorization": "Bearer s3cret"}

        def both_evaluated() -> bool:
            rows = httpx.get(f"{ragpulse.metrics_url}/api/evaluations", headers=headers).json()["evaluations"]
            return len({row["trace_id"] for row in rows if row["metric"] == "faithfulness"}) == 2

        wait_for(both_evaluated, 60, "two records scored")
        via_api, via_store = tmp_path / "api.jsonl", tmp_path / "store.jsonl"
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RAGPULSE_PAGE__TOKEN", "s3cret")  # the default --token-env: the sidecar's own
            assert (
                export(
                    capsys, "--url", ragpulse.metrics_url, "--metric", "faithfulness", "--out", str(via_api)
                )[0]
                == 0
            )
        assert (
            export(capsys, "--store", str(store_path), "--metric", "faithfulness", "--out", str(via_store))[0]
            == 0
        )
    assert lines(via_api) == lines(via_store)
    (case,) = lines(via_store)
    assert case["actual_output"] == invented.response and case["metadata"]["route"] == "/invented"
    assert "faithfulness" in case["metadata"]["failed_metrics"]
    (result,) = (
        evaluate(load_cases(via_store), [create_metric("faithfulness")], OfflineJudge()).cases[0].results
    )
    assert (result.outcome, result.score) == (
        Outcome.FAILED,
        case["metadata"]["metrics"]["faithfulness"]["score"],
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give exactly one source"),
        (["--store", "x.db", "--url", "http://127.0.0.1:1"], "give exactly one source"),
        (["--store", "{tmp}/missing.db"], "missing.db: no such file"),
        (["--store", "{tmp}/corrupt.db"], "corrupt.db: not a ragpulse page store"),
        (["--store", "{tmp}/other.db"], "other.db: not a ragpulse page store (no such table: records)"),
        (["--store", "{tmp}/other.db", "--since", "yesterday"], "--since 'yesterday': use a duration"),
        (["--store", "{tmp}/other.db", "--limit", "0"], "--limit '0': a whole number, at least 1"),
        (["--store", "{tmp}/other.db", "--limit", "ten"], "--limit 'ten': a whole number"),
        (["--store", "{tmp}/page.db", "--out", "{tmp}/no/such/dir/cases.jsonl"], "cannot write"),
        (["--kafka-bootstrap", "127.0.0.1:{port}"], "cannot reach Kafka at 127.0.0.1:"),
        (["--url", "http://127.0.0.1:{port}"], "cannot reach http://127.0.0.1:"),
        (["--url", "127.0.0.1:9464"], "--url '127.0.0.1:9464': expected http://host:port"),
        (
            ["--url", "http://127.0.0.1:{port}", "--token-env", "NO_SUCH_VARIABLE"],
            "NO_SUCH_VARIABLE: the variable",
        ),
    ],
)
def test_errors_are_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "corrupt.db").write_bytes(b"\x00garbage" * 4096)
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE t (x)").connection.close()
    Page(PageConfig(store_path=tmp_path / "page.db")).close()  # (its writer thread too, not just the store)
    port = str(free_port())
    code, err = export(capsys, *(a.replace("{tmp}", str(tmp_path)).replace("{port}", port) for a in args))
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("ragpulse export-cases: ") and message in err[0], err


def test_since_and_line_breaks_inside_texts(tmp_path: Path) -> None:
    now = 1_800_000_000.0
    assert since_timestamp("2h", now) == now - 7200 and since_timestamp("30m", now) == now - 1800
    assert since_timestamp("1.5d", now) == now - 1.5 * 86400
    assert since_timestamp("2027-01-15T08:00:00Z") == since_timestamp("2027-01-15T08:00:00")
    assert since_timestamp("2027-01-15T09:00:00+01:00") == since_timestamp("2027-01-15T08:00:00")
    # str.splitlines() breaks at U+2028 and U+0085, which JSON leaves as they are: one case, one line.
    text = "first\u2028second\x85third\u2029é"
    path = tmp_path / "breaks.jsonl"
    path.write_text(case_line({"id": "a:b", "input": text, "actual_output": "x"}) + "\n", encoding="utf-8")
    (case,) = load_cases(path)
    assert case.input == text and "é" in path.read_text(encoding="utf-8")


def test_version_filter_and_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store_path = tmp_path / "page.db"
    page = Page(PageConfig(store_path=store_path))
    before, after = make_record(service_version="v1"), make_record(service_version="v2", prompt_version="p7")
    for record in (before, after):
        page.exporter.export(record, [faithfulness(0.5)])
    assert page.exporter.force_flush(10)
    page.close()
    page.store.close()
    out = tmp_path / "v2.jsonl"
    assert export(capsys, "--store", str(store_path), "--version", "v2", "--out", str(out))[0] == 0
    (case,) = lines(out)
    assert case["metadata"]["trace_id"] == after.trace_id
    assert (case["metadata"]["service_version"], case["metadata"]["prompt_version"]) == ("v2", "p7")
    assert export(capsys, "--store", str(store_path), "--version", "p7", "--out", str(out))[0] == 0
    assert [c["metadata"]["trace_id"] for c in lines(out)] == [after.trace_id]
    assert export(capsys, "--store", str(store_path), "--out", str(out))[0] == 0
    unversioned = {c["metadata"]["trace_id"]: c["metadata"] for c in lines(out)}[before.trace_id]
    assert unversioned["service_version"] == "v1" and "prompt_version" not in unversioned


def test_a_case_keeps_every_field_a_metric_reads_and_what_production_said(tmp_path: Path) -> None:
    """The detail shape as the store returns it (list columns as JSON text) -> a case with the expected
    output, the reference ids and contexts, the baseline, the conversation id and, per metric, production's
    result and judge; `ragpulse eval`'s reader reads all of it back. (test_eval_loop.py walks the loop.)"""
    passages = [
        {"rank": i, "id": f"eiffel-{i}", "score": 0.9 - i / 10, "text": t} for i, t in enumerate(PASSAGES)
    ]
    evaluations = [
        {"metric": "retrieval_mrr", "outcome": "failed", "score": 0.5, "threshold": 1.0, "judge": "openai",
         "judge_model": "gpt-4o-mini", "evaluated_at": 1.8e9, "reason": "first relevant at rank 2"},
        {"metric": "answer_correctness", "outcome": "failed", "score": 0.2, "threshold": 0.5,
         "judge": "cascade", "judge_model": "gpt-4o", "evaluated_at": 1.8e9 + 1},
    ]  # fmt: skip
    record = {
        "trace_id": "a" * 32, "span_id": "b" * 16, "service": "shop", "route": "/ask", "model": "m",
        "service_version": "v7", "prompt_version": "", "conversation_id": "conversation-42",
        "question": QUESTION, "answer": ANSWER, "expected_output": "330 metres.",
        "baseline_output": "It is 330 metres tall.",
        "reference_contexts": '["The tower is 330 metres tall."]',
        "reference_context_ids": '["eiffel-1"]', "evaluated_at": 1.8e9 + 1,
        "passages": passages, "evaluations": evaluations,
    }  # fmt: skip
    case = case_from_record(record)
    assert case["metadata"]["conversation_id"] == "conversation-42"
    assert case["metadata"]["service_version"] == "v7" and "prompt_version" not in case["metadata"]
    assert {name: (m["judge"], m["judge_model"]) for name, m in case["metadata"]["metrics"].items()} == {
        "retrieval_mrr": ("openai", "gpt-4o-mini"),
        "answer_correctness": ("cascade", "gpt-4o"),
    }
    path = tmp_path / "case.jsonl"
    path.write_text(case_line(case) + "\n")
    (loaded,) = load_cases(path)
    assert (loaded.expected_output, loaded.baseline_output) == ("330 metres.", "It is 330 metres tall.")
    assert loaded.reference_context_ids == ["eiffel-1"] and loaded.context == [
        "The tower is 330 metres tall."
    ]
    assert loaded.retrieved_context_ids == ["eiffel-0", "eiffel-1", "eiffel-2"]
    (mrr,) = (
        evaluate([loaded], [create_metric("retrieval_mrr", threshold=1.0)], NoCallsJudge()).cases[0].results
    )  # type: ignore[arg-type]
    assert (mrr.outcome, mrr.score) == (Outcome.FAILED, 0.5)  # as production scored it
    production = production_result([loaded])
    assert production is not None and production.judge == {"judge": "several", "model": ""}
    assert {r.name: (r.outcome, r.score) for r in production.cases[0].results} == {
        "answer_correctness": (Outcome.FAILED, 0.2),
        "retrieval_mrr": (Outcome.FAILED, 0.5),
    }
    # Without reference contexts, the case's `context` is the retrieved passages, as the sidecar's was.
    plain = case_from_record({**record, "reference_contexts": None})
    assert plain["context"] == plain["retrieval_context"] == list(PASSAGES)
