"""Extraction on the committed captures of real instrumentation (fast, no instrumentation venv).

The live suite (test_conformance.py) proves the current libraries end to end; these captures, taken
from the same apps (refresh: `python -m tests.instrumentation.capture`), pin each combination's shape
so an extraction change that breaks one shows in a second, with the exact field that changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collector.conventions import explain, extract
from testkit.captured import captured_traces
from tests.instrumentation.capture import COMBINATIONS, FIXTURES, combination_name
from tests.instrumentation.test_conformance import EXPECTATIONS


@pytest.mark.parametrize("combo", [combination_name(*c) for c in COMBINATIONS])
def test_captured_trace_is_extracted_exactly(combo: str) -> None:
    check_extracted_exactly(FIXTURES / combo, combo)


def check_extracted_exactly(folder: Path, combo: str) -> None:
    """Each question's trace gives exactly one record, of what the app asked, retrieved and answered
    (ids and scores where `EXPECTATIONS` says the trace carries them); no other trace gives one."""
    expect = EXPECTATIONS[combo]
    expected = json.loads((folder / "expected.json").read_text())
    records, questions = {}, {e["trace_id"] for e in expected}
    for trace in captured_traces(folder):
        found = extract(trace.trace_id, trace.spans)
        if trace.trace_id in questions:
            assert len(found) == 1, explain(trace.spans)
            records[trace.trace_id] = found[0]
        else:  # index builds and embedding batches
            assert found == [], f"trace {trace.trace_id} is no question, yet gave {found}"
    for item in expected:
        record = records[item["trace_id"]]
        assert (record.query, record.response) == (item["question"], item["response"])
        assert (record.service, record.route, record.model) == (item["service"], item["route"], item["model"])
        assert [n.text for n in record.nodes] == [p["text"] for p in item["passages"]]
        if expect.ids:
            assert [n.id for n in record.nodes] == [p["id"] for p in item["passages"]]
        scores = [n.score for n in record.nodes]
        assert scores == (
            pytest.approx([p["score"] for p in item["passages"]]) if expect.scores else [None] * len(scores)
        )
        assert record.anchor_span_id != "" and (record.conversation_id != "") == expect.conversation
