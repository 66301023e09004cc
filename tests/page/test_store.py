"""The page's store: one copy of each result, bounded by retention and size, no texts with hide_texts."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from collector.exporters.verdicts import VerdictLimits
from collector.page.exporter import StoreExporter, stored_evaluation
from collector.page.metrics import STORE_DROPPED, STORE_EVICTED
from collector.page.queries import Filters, detail, evaluations
from collector.page.store import Store, StoredEvaluation, StoredPassage
from collector.page.summaries import hotspots
from collector.page.writer import StoreWriter
from tests.page.factories import ANSWER, PASSAGES, QUESTION, faithfulness, make_record, relevancy

NOW = 1_800_000_000.0


def stored(record=None, evaluation=None, at: float = NOW, hide_texts: bool = False) -> StoredEvaluation:
    return stored_evaluation(
        record or make_record(), evaluation or faithfulness(), at, VerdictLimits(), hide_texts=hide_texts
    )


def count(store: Store, table: str) -> int:
    with store.reader() as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_the_same_result_twice_is_stored_once_and_passages_merge() -> None:
    store = Store(clock=lambda: NOW)
    record = make_record()
    first = stored(record, faithfulness())
    again = stored(record, faithfulness(), at=NOW + 5)  # this replica's export, then the topic read back
    # What another replica's older results document knows: no texts, no relevance, one judged passage.
    passages = (
        StoredPassage("eiffel-0"),
        StoredPassage("eiffel-1"),
        StoredPassage("eiffel-2", relevance="relevant"),
    )
    partial = StoredEvaluation(
        record.trace_id, record.anchor_span_id, "answer_relevancy", "passed", 1.0, NOW, passages=passages
    )
    assert store.write([first]) == []
    assert store.write([again, partial]) == []
    assert count(store, "records") == 1 and count(store, "evaluations") == 2 and count(store, "passages") == 3
    with store.reader() as db:
        record_view = detail(db, record.trace_id, record.anchor_span_id)
    assert record_view is not None
    assert record_view["question"] == QUESTION and record_view["answer"] == ANSWER  # not erased by `partial`
    assert [p["text"] for p in record_view["passages"]] == list(PASSAGES)
    # "relevant" wins over "irrelevant", as in evaluators.causes.passage_relevance
    assert [p["relevance"] for p in record_view["passages"]] == ["relevant", "relevant", "relevant"]
    assert [p["contradicts"] for p in record_view["passages"]] == [False, True, False]
    (faith,) = [e for e in record_view["evaluations"] if e["metric"] == "faithfulness"]
    assert faith["evaluated_at"] == NOW + 5 and faith["cause"] == "contradicted_claim"
    assert faith["verdicts"][1] == {
        "kind": "claim",
        "verdict": "contradicted",
        "passages": [1],
        "item": "It is 512 metres tall.",
        "reason": "the context says 330",
    }
    assert record_view["judge_tokens"] == 812 and record_view["judge_cost_usd"] == pytest.approx(0.00031)


def test_retention_deletes_what_is_older_and_counts_it() -> None:
    now = [NOW]
    store = Store(retention_s=3600, clock=lambda: now[0])
    old, recent = make_record(), make_record()
    store.write([stored(old, faithfulness(), NOW - 4000), stored(old, relevancy(), NOW - 4000)])
    store.write([stored(recent, faithfulness(), NOW - 10)])
    before = STORE_EVICTED.labels("retention")._value.get()
    store.enforce_bounds()
    assert STORE_EVICTED.labels("retention")._value.get() == before + 2
    with store.reader() as db:
        assert detail(db, old.trace_id, old.anchor_span_id) is None
        assert detail(db, recent.trace_id, recent.anchor_span_id) is not None
    assert count(store, "passages") == 3  # the old record's passages went with it


def test_size_cap_deletes_oldest_first_until_under(tmp_path: Path) -> None:
    cap = 256 * 1024
    store = Store(tmp_path / "page.db", max_bytes=cap, clock=lambda: NOW)
    big = "x" * 2000
    records = [make_record(answer=big) for _ in range(300)]
    for i, record in enumerate(records):
        store.write([stored(record, faithfulness(), NOW - 300 + i)])
    assert store.used_bytes() > cap
    before = STORE_EVICTED.labels("size")._value.get()
    store.enforce_bounds()
    assert store.used_bytes() <= cap
    assert STORE_EVICTED.labels("size")._value.get() > before
    with store.reader() as db:
        kept = {row[0] for row in db.execute("SELECT trace_id FROM records")}
    assert records[-1].trace_id in kept and records[0].trace_id not in kept  # the newest stay
    # Freed pages are reused: writing as much again does not grow the file past the cap by much.
    size = (tmp_path / "page.db").stat().st_size
    for record in [make_record(answer=big) for _ in range(300)]:
        store.write([stored(record, faithfulness(), NOW)])
        store.enforce_bounds()
    assert (tmp_path / "page.db").stat().st_size <= max(size, cap) * 1.2


def test_hide_texts_stores_no_text_at_all(tmp_path: Path) -> None:
    path = tmp_path / "page.db"
    store = Store(path, hide_texts=True, clock=lambda: NOW)
    record = make_record(answer="My card is 4111 1111 1111 1111. It is 512 metres tall.")
    # Even a row that carries texts (a results document from a replica without hide_texts) loses them.
    assert store.write([stored(record, faithfulness()), stored(record, relevancy())]) == []
    store.close()
    dump = "\n".join(sqlite3.connect(path).iterdump())
    texts = ("4111 1111", "512 metres", "Eiffel", "context says", "claims supported", "statements address")
    for text in texts:  # "4111 1111", not "4111": a random trace id may hold those digits
        assert text not in dump
    store = Store(path, hide_texts=True)
    with store.reader() as db:
        view = detail(db, record.trace_id, record.anchor_span_id)
    assert view is not None
    assert [p["id"] for p in view["passages"]] == ["eiffel-0", "eiffel-1", "eiffel-2"]
    (faith,) = [e for e in view["evaluations"] if e["metric"] == "faithfulness"]
    assert faith["verdicts"][1] == {"kind": "claim", "verdict": "contradicted", "passages": [1]}
    assert faith["score"] == 0.5 and faith["reason"] is None


def test_filters_and_hotspots() -> None:
    store = Store(clock=lambda: NOW)
    failing = [make_record(service="shop", route="/ask") for _ in range(3)]
    passing = make_record(service="wiki", route="/search")
    for record in failing:
        store.write([stored(record, faithfulness(0.5), NOW - 60), stored(record, relevancy(), NOW - 60)])
    store.write([stored(passing, faithfulness(1.0, contradicted_by=2), NOW - 7200)])
    with store.reader() as db:
        assert len(evaluations(db, Filters(), NOW)) == 6
        failed = evaluations(db, Filters(outcome="failed"), NOW)
        assert {row["metric"] for row in failed} == {"faithfulness"} and len(failed) == 3
        assert evaluations(db, Filters(service="wiki", window="6h"), NOW)[0]["trace_id"] == passing.trace_id
        assert evaluations(db, Filters(service="wiki", window="1h"), NOW) == []
        by_document = evaluations(db, Filters(document="eiffel-1", role="contradicting"), NOW)
        assert {row["trace_id"] for row in by_document} == {r.trace_id for r in failing}
        assert {row["metric"] for row in by_document} == {"faithfulness"}
        spots = hotspots(db, NOW - 86400)
    assert spots["irrelevant"] == [{"document": "eiffel-2", "count": 4, "retrieved": 4, "share": 1.0}]
    assert spots["contradicting"][0] == {"document": "eiffel-1", "count": 3, "retrieved": 4, "share": 0.75}


def test_exporter_queues_flushes_and_never_raises() -> None:
    store = Store(clock=lambda: NOW)
    writer = StoreWriter(store, max_queued=10)
    exporter = StoreExporter(writer, clock=lambda: NOW)
    record = make_record()
    exporter.export(record, [faithfulness(), relevancy()])
    assert exporter.force_flush(5.0)
    assert count(store, "evaluations") == 2
    before = STORE_DROPPED.labels("invalid")._value.get()
    exporter.export(None, [faithfulness()])  # type: ignore[arg-type]  # a bug upstream: counted, not raised
    assert STORE_DROPPED.labels("invalid")._value.get() == before + 1
    # A row SQLite refuses (an id too large to bind) is counted and the rest of its batch still lands.
    bad = StoredEvaluation("t" * 32, "s" * 16, "faithfulness", "passed", 1.0, NOW, tokens=2**70)
    refused_before = STORE_DROPPED.labels("write_error")._value.get()
    writer.submit([bad, stored()])
    assert writer.flush(5.0)
    assert STORE_DROPPED.labels("write_error")._value.get() == refused_before + 1
    assert count(store, "evaluations") == 3
    exporter.shutdown()
    exporter.export(record, [faithfulness()])  # after shutdown: a no-op
    assert exporter.force_flush(1.0)
    writer.close()


def test_a_full_queue_saturates_then_drops_and_counts() -> None:
    store = Store(clock=lambda: NOW)
    entered, blocked = threading.Event(), threading.Event()
    real_write = store.write

    def slow_write(items):  # type: ignore[no-untyped-def]
        entered.set()
        blocked.wait(10)
        return real_write(items)

    store.write = slow_write  # type: ignore[method-assign]
    writer = StoreWriter(store, max_queued=10)
    exporter = StoreExporter(writer, clock=lambda: NOW)
    exporter.export(make_record(), [faithfulness()])  # taken by the writer thread, which now waits
    assert entered.wait(5)
    for _ in range(9):
        exporter.export(make_record(), [faithfulness()])
    assert exporter.saturated
    before = STORE_DROPPED.labels("queue_full")._value.get()
    for _ in range(3):
        exporter.export(make_record(), [faithfulness()])
    assert STORE_DROPPED.labels("queue_full")._value.get() == before + 2  # one more fitted: 10 queued
    blocked.set()
    assert exporter.force_flush(10.0) and not exporter.saturated
    assert count(store, "evaluations") == 11
    writer.close()
