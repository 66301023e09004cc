"""The trace and conversation views' queries, and which reasons `hide_texts` keeps."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from collector.exporters.verdicts import VerdictLimits
from collector.page.exporter import stored_evaluation
from collector.page.queries import detail
from collector.page.store import Store
from collector.page.threads import conversation, is_conversational, trace
from collector.stages import Evaluation, Outcome
from evaluators.result import reason_holds_texts
from tests.page.factories import faithfulness, make_record, relevancy

NOW = 1_800_000_000.0
ENDED_NS = int((NOW - 3) * 1e9)


def result(metric: str, outcome: Outcome, reason: str, score: float | None = None) -> Evaluation:
    return Evaluation(
        metric=metric,
        outcome=outcome,
        score=score,
        reason=reason,
        threshold=0.5,
        lower_is_better=False,
        judge="openai",
        judge_model="gpt-4o-mini",
    )


def write(store: Store, record, *evaluations: Evaluation, at: float = NOW, hide: bool = False) -> None:  # type: ignore[no-untyped-def]
    rows = [stored_evaluation(record, e, at, VerdictLimits(), hide_texts=hide) for e in evaluations]
    assert store.write(rows) == []


def test_a_trace_lists_each_answer_span_with_where_it_came_from_and_when() -> None:
    store = Store(clock=lambda: NOW)
    first = make_record(convention="openinference", end_time_unix_nano=ENDED_NS, conversation_id="c-1")
    second = make_record(trace_id=first.trace_id, convention="genai", end_time_unix_nano=ENDED_NS + 10**9)
    write(store, second, relevancy())
    write(store, first, faithfulness(), relevancy())
    with store.reader() as db:
        view = trace(db, first.trace_id)
        assert trace(db, "0" * 32) is None
    assert view is not None
    assert [r["span_id"] for r in view["records"]] == [first.anchor_span_id, second.anchor_span_id]
    one = view["records"][0]
    assert (one["convention"], one["conversation_id"]) == ("openinference", "c-1")
    assert one["judged_after_s"] == pytest.approx(3.0)
    assert [e["metric"] for e in one["evaluations"]] == ["answer_relevancy", "faithfulness"]
    assert view["judge_tokens"] == 812 + 300 + 300


def test_a_conversation_has_its_turns_in_order_and_its_own_metrics() -> None:
    store = Store(clock=lambda: NOW)
    turns = [
        make_record(conversation_id="chat-7", end_time_unix_nano=ENDED_NS + i * 10**9, query=f"turn {i}?")
        for i in range(3)
    ]
    for turn in reversed(turns):  # judged out of order: the view orders by when the turns happened
        write(store, turn, faithfulness(0.9), relevancy())
    retention = result("knowledge_retention", Outcome.FAILED, "forgot the user's name", 0.25)
    write(store, turns[-1], retention, at=NOW + 300)  # judged once the conversation went quiet
    write(store, make_record(conversation_id="other"), relevancy())
    with store.reader() as db:
        view = conversation(db, "chat-7")
        assert conversation(db, "nope") is None and conversation(db, "") is None
    assert view is not None
    assert [t["question"] for t in view["turns"]] == ["turn 0?", "turn 1?", "turn 2?"]
    assert [t["number"] for t in view["turns"]] == [1, 2, 3]
    assert view["metrics"] == ["answer_relevancy", "faithfulness"]
    assert all(len(t["evaluations"]) == 2 for t in view["turns"])
    (whole,) = view["conversation_metrics"]
    assert (whole["metric"], whole["score"], whole["turn"]) == ("knowledge_retention", 0.25, 3)
    assert is_conversational("knowledge_retention") and not is_conversational("faithfulness")
    assert not is_conversational("my_custom_criteria")


def test_hide_texts_keeps_the_reasons_that_hold_no_text(tmp_path: Path) -> None:
    assert reason_holds_texts(Outcome.PASSED) and reason_holds_texts("failed") and reason_holds_texts("error")
    assert not reason_holds_texts(Outcome.UNMEASURED)
    path = tmp_path / "page.db"
    store = Store(path, hide_texts=True, clock=lambda: NOW)
    record = make_record(answer="My card is 4111 1111 1111 1111.")
    why_unmeasured = "unmeasured: no reference context ids to compare against"
    why_error = "judge error: HTTP 400: the request's text 'My card is 4111' is too long"  # may echo texts
    write(
        store,
        record,
        faithfulness(),
        result("contextual_recall", Outcome.UNMEASURED, why_unmeasured),
        result("answer_relevancy", Outcome.ERROR, why_error),
        hide=True,
    )
    # A results document from a replica without hide_texts: the store still drops its judge's reasons.
    write(store, record, faithfulness(), hide=False)
    with store.reader() as db:
        view = detail(db, record.trace_id, record.anchor_span_id)
    assert view is not None
    reasons = {e["metric"]: e["reason"] for e in view["evaluations"]}
    assert reasons == {
        "faithfulness": None,
        "contextual_recall": why_unmeasured,
        "answer_relevancy": None,
    }
    store.close()
    dump = "\n".join(sqlite3.connect(path).iterdump())
    assert "4111 1111" not in dump and "claims supported" not in dump and "context says" not in dump
