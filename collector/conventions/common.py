"""Shared attribute readers for the convention adapters: typed access with clear errors."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from collector.records import RetrievedNode
from collector.spans import Span


class ExtractionError(Exception):
    """A trace that claims to carry RAG data but carries it wrongly; `reason` is low-cardinality."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(slots=True)
class Found:
    """What a convention found; `anchor` is the span that carried the response."""

    query: str
    response: str
    anchor: Span
    nodes: list[RetrievedNode] = field(default_factory=list)
    model: str = ""


def require(query: str | None, response: str | None, where: str) -> tuple[str, str]:
    """A convention that recognised RAG spans but lacks the query or response is invalid input."""
    if query is None or response is None:
        missing = " or ".join(n for n, v in (("query", query), ("response", response)) if v is None)
        raise ExtractionError("missing_attribute", f"{where} trace has no {missing}")
    return query, response


def text(span: Span, key: str) -> str | None:
    """A string attribute, None when absent; any other type is an error naming the key."""
    value = span.attributes.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ExtractionError(
            "wrong_type", f"{key} on span {span.span_id} is {type(value).__name__}, not string"
        )
    return value


def number(span: Span, key: str) -> float | None:
    value = span.attributes.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExtractionError(
            "wrong_type", f"{key} on span {span.span_id} is {type(value).__name__}, not number"
        )
    return float(value)


def parse_json(span: Span, key: str, raw: str, reason: str = "invalid_json") -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ExtractionError(reason, f"{key} on span {span.span_id}: {exc}") from None


def indexed(span: Span, prefix: str) -> dict[int, dict[str, Any]]:
    """Group flattened `prefix.N.rest` attributes by N: {N: {rest: value}}."""
    groups: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if index.isdigit():
            groups.setdefault(int(index), {})[rest] = value
    return dict(sorted(groups.items()))


def node_from_mapping(item: Any, position: int, span: Span, key: str) -> RetrievedNode:
    """A node from a document object ({id, content|text|page_content, score}) or a bare string."""
    if isinstance(item, str):
        return RetrievedNode(id=str(position), text=item)
    if not isinstance(item, dict):
        raise ExtractionError(
            "wrong_type", f"{key}[{position}] on span {span.span_id} is {type(item).__name__}"
        )
    content = next((item[k] for k in ("content", "text", "page_content", "document") if k in item), None)
    if isinstance(content, dict):  # {"document": {"content": ...}}
        return node_from_mapping(content, position, span, key)
    if not isinstance(content, str):
        raise ExtractionError(
            "missing_attribute", f"{key}[{position}] on span {span.span_id} has no text content"
        )
    score = item.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise ExtractionError("wrong_type", f"{key}[{position}].score on span {span.span_id} is not a number")
    node_id = item.get("id", (item.get("metadata") or {}).get("id", position))
    return RetrievedNode(id=str(node_id), text=content, score=None if score is None else float(score))


def nodes_from_json(span: Span, key: str) -> list[RetrievedNode] | None:
    """Nodes from an attribute holding a JSON array (or a list of JSON strings/objects)."""
    value = span.attributes.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = parse_json(span, key, value, "invalid_retrieval_json")
    if isinstance(value, dict):  # {"documents": [...]}
        value = value.get("documents", value.get("results"))
    if not isinstance(value, list):
        raise ExtractionError("invalid_retrieval_json", f"{key} on span {span.span_id} is not a list")
    items = [json.loads(v) if isinstance(v, str) and v[:1] in "{[" else v for v in value]
    return [node_from_mapping(item, i, span, key) for i, item in enumerate(items)]


def first(spans: Iterable[Span], *keys: str) -> tuple[Span, str] | None:
    """The first span (in the given order) carrying any of `keys`, and the key it carries."""
    for span in spans:
        for key in keys:
            if key in span.attributes:
                return span, key
    return None


def by_time(spans: Iterable[Span]) -> list[Span]:
    return sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
