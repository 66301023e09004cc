"""Extract a `RagRecord` from an assembled trace, trying each instrumentation convention in order.

Each convention is one small module with a `find(spans) -> Found | None`; what they share
(labels, references for evaluation, the record itself) is built here once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from collector.conventions import genai, native, openinference, openllmetry
from collector.conventions.common import ExtractionError, Found, parse_json, require, text
from collector.records import RagRecord
from collector.spans import Span


class Convention(Protocol):
    name: str

    def find(self, spans: Sequence[Span]) -> Found | None: ...


CONVENTIONS: tuple[Convention, ...] = (
    openinference.OpenInference(),
    genai.GenAI(),
    openllmetry.OpenLLMetry(),
    native.Native(),
)
_ROUTE_KEYS = ("rag.route", "http.route", "url.template")


def extract(trace_id: str, spans: Sequence[Span]) -> list[RagRecord]:
    """The trace's RagRecords; empty when no convention finds RAG data. Raises ExtractionError."""
    for convention in CONVENTIONS:
        found = convention.find(spans)
        if found is not None:
            return [_record(trace_id, spans, found, convention.name)]
    return []


def _record(trace_id: str, spans: Sequence[Span], found: Found, convention: str) -> RagRecord:
    roots_first = sorted(spans, key=lambda s: not s.is_root)
    route = next((v for s in roots_first for k in _ROUTE_KEYS if (v := text(s, k))), "")
    expected = next((v for s in spans if (v := text(s, "rag.expected_output"))), None)
    references: list[str] = []
    for span in spans:
        raw = text(span, "rag.reference_contexts")
        if raw is not None:
            value = parse_json(span, "rag.reference_contexts", raw)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ExtractionError("wrong_type", "rag.reference_contexts is not a JSON list of strings")
            references = value
    return RagRecord(
        trace_id=trace_id,
        anchor_span_id=found.anchor.span_id,
        query=found.query,
        response=found.response,
        nodes=tuple(found.nodes),
        expected_output=expected,
        reference_contexts=tuple(references),
        service=found.anchor.service,
        route=route,
        model=found.model,
        convention=convention,
        end_time_unix_nano=max(s.end_ns for s in spans),
    )


__all__ = ["CONVENTIONS", "Convention", "ExtractionError", "Found", "extract", "require"]
