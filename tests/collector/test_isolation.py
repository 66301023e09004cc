"""A bug met by one trace stays with that trace: counted, dead-lettered, logged once; the rest flows.

The bug is injected into a convention adapter (a crash no fuzz test found is the case that matters);
the traces travel through the real OTLP/HTTP receiver into the in-process collector.
"""

from __future__ import annotations

import logging

import pytest

from collector.conventions import CONVENTIONS, openinference
from collector.metrics import DEAD_LETTERS, TRACES
from testkit.collector_runner import RunningCollector, wait_for
from testkit.otlp import post_traces
from testkit.rag_traces import RagCase, encode, make_spans


def test_an_unexpected_exception_in_one_trace_does_not_stop_the_others(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = next(c for c in CONVENTIONS if isinstance(c, openinference.OpenInference))
    original = adapter.shapes

    def buggy(spans):
        if any(s.attributes.get("input.value") == "poison" for s in spans):
            raise KeyError("a bug the fuzz tests did not find")
        return original(spans)

    monkeypatch.setattr(adapter, "shapes", buggy)
    invalid, internal = (
        TRACES.labels("invalid")._value.get(),
        DEAD_LETTERS.labels("internal_error")._value.get(),
    )
    with caplog.at_level(logging.ERROR, "collector.pipeline.pipeline"), RunningCollector() as collector:
        poison = make_spans("openinference", RagCase(query="poison"))
        good = [make_spans("openinference", RagCase(query=f"question {i}")) for i in range(3)]
        for spans in (poison, *good):
            assert post_traces(collector.service.receiver.port, encode(spans))[0] == 200
        wait_for(lambda: len(collector.records) == 3, 20, "the three good traces extracted")
        assert collector.service.pipeline.ready
    assert sorted(r["query"] for r in collector.records) == ["question 0", "question 1", "question 2"]
    assert TRACES.labels("invalid")._value.get() == invalid + 1
    assert DEAD_LETTERS.labels("internal_error")._value.get() == internal + 1
    poison_id = format(poison[0].context.trace_id, "032x")
    lines = [r.getMessage() for r in caplog.records if "could not be processed" in r.getMessage()]
    assert len(lines) == 1 and poison_id in lines[0] and "KeyError" in lines[0]
    assert caplog.records[0].exc_info is None  # one clear line, no traceback at the default level
