"""Shared attribute readers for the convention adapters: typed access with clear errors."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from collector.metrics import IMAGES_LEFT_OUT
from collector.records import RetrievedNode
from collector.spans import Span
from evaluators.images import MAX_DATA_URI_CHARS, kept_image
from ragpulse_sdk import attributes


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


def parse_json(span: Span, key: str, raw: str, reason: str = "invalid_json") -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ExtractionError(reason, f"{key} on span {span.span_id}: {exc}") from None
    except RecursionError:
        raise ExtractionError(reason, f"{key} on span {span.span_id}: JSON nested too deeply") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise ExtractionError(reason, f"{key} on span {span.span_id}: {str(exc)[:200]}") from None


def loads_lenient(value: Any, depth: int = 3) -> Any:
    """Decode JSON found in third-party attributes, also when encoded twice; non-JSON stays as it is.

    Instrumentations serialise what they see: OpenLLMetry's LlamaIndex spans hold lists of JSON
    strings of nodes, OpenInference holds document metadata as a JSON string. Deep or invalid JSON
    is not an error here: the value is simply not structured.
    """
    for _ in range(depth):
        if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "[", '"'):
            return value
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # ValueError: also integers past the digit limit
            return value
    return value


def pick_text(value: Any, keys: Sequence[str], depth: int = 4) -> str | None:
    """The first non-empty string under the preferred keys, searched breadth-first through nesting.

    Chain inputs come as `"question"`, `{"question": ...}`, `{"query_bundle": {"query_str": ...}}`,
    `{"args": ["question"], "kwargs": {}}`; one reader serves them all.
    """
    value = loads_lenient(value)
    if isinstance(value, str):
        return value if value.strip() else None
    level: list[Any] = [value]
    for _ in range(depth):
        following: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                for key in keys:
                    found = loads_lenient(item.get(key))
                    if isinstance(found, str) and found.strip():
                        return found
                following.extend(loads_lenient(v) for v in item.values())
            elif isinstance(item, list):
                strings = [v for v in item if isinstance(v, str) and v.strip()]
                if len(strings) == 1 and len(item) == 1:  # {"args": ["the question"]}
                    return strings[0]
                following.extend(loads_lenient(v) for v in item)
        level = [v for v in following if isinstance(v, dict | list)]
        if not level:
            break
    return None


def indexed(span: Span, prefix: str) -> dict[int, dict[str, Any]]:
    """Group flattened `prefix.N.rest` attributes by N: {N: {rest: value}}."""
    return indexed_items(span.attributes, prefix)


def indexed_items(mapping: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    groups: dict[int, dict[str, Any]] = {}
    for key, value in mapping.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if index.isdigit() and len(index) < 7:
            groups.setdefault(int(index), {})[rest] = value
    return dict(sorted(groups.items()))


_CONTENT_KEYS = ("content", "text", "page_content", "pageContent", "document")
_ID_KEYS = ("id", "id_", "doc_id", "document_id", "node_id")


def node_from_mapping(item: Any, position: int, span: Span, key: str) -> RetrievedNode:
    """A node from a document object or a bare string; a document without text keeps its id and score.

    Shapes seen in real traces: OpenInference `{id, content, score, metadata: "<JSON>"}`, GenAI
    semconv `{id, score}` (content optional), LangChain `{page_content, metadata, id}` (JS:
    `pageContent`), LlamaIndex `{"node": {"id_", "text", "metadata"}, "score"}`, and any of these
    JSON-encoded as a string.
    """
    if isinstance(item, str):  # the checks before each loads_lenient spare a call per plain value
        item = loads_lenient(item)
        if isinstance(item, str):
            return RetrievedNode(id=str(position), text=_bounded(item))
    if not isinstance(item, dict):
        raise ExtractionError(
            "wrong_type", f"{key}[{position}] on span {span.span_id} is {type(item).__name__}"
        )
    inner = item.get("node")
    if isinstance(inner, str):
        inner = loads_lenient(inner)
    if isinstance(inner, dict):  # LlamaIndex NodeWithScore
        node = node_from_mapping(inner, position, span, key)
        return RetrievedNode(node.id, node.text, _score(item, position, span, key) or node.score)
    content = None
    for content_key in _CONTENT_KEYS:
        if (content := item.get(content_key)) is not None:
            break
    if isinstance(content, str):
        content = loads_lenient(content)
    if isinstance(content, dict):  # {"document": {"content": ...}}
        return node_from_mapping(content, position, span, key)
    if content is not None and not isinstance(content, str):
        raise ExtractionError(
            "wrong_type", f"{key}[{position}].content on span {span.span_id} is {type(content).__name__}"
        )
    metadata = item.get("metadata")
    if isinstance(metadata, str):
        metadata = loads_lenient(metadata)
    node_id: Any = position
    for source in (item, metadata) if isinstance(metadata, dict) else (item,):
        found = next((v for k in _ID_KEYS if (v := source.get(k)) is not None and v != ""), None)
        if found is not None:
            node_id = found
            break
    return RetrievedNode(
        id=str(node_id), text=_bounded(content or ""), score=_score(item, position, span, key)
    )


def image_passage(reference: Any) -> str | None:
    """A declared image (a message part of type image, a document of image modality) as a passage, or
    None, counted with the reason (`evaluators.images` says what an image passage is and how big)."""
    kept, why = kept_image(reference) if isinstance(reference, str) else (None, "not_recognised")
    if kept is None:
        IMAGES_LEFT_OUT.labels(why).inc()
    return kept


def _bounded(content: str) -> str:
    """A document whose content is an image data URI past the cap keeps its id and score, not its bytes."""
    if len(content) > MAX_DATA_URI_CHARS and content.lstrip()[:11].lower() == "data:image/":
        IMAGES_LEFT_OUT.labels("too_large").inc()
        return ""
    return content


def _score(item: dict[str, Any], position: int, span: Span, key: str) -> float | None:
    score = item.get("score")
    if score is None:
        return None
    try:
        value = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else math.nan
    except OverflowError:  # an integer beyond float range
        value = math.nan
    if not math.isfinite(value):  # NaN and infinities would reach JSON results and labels as non-numbers
        raise ExtractionError("wrong_type", f"{key}[{position}].score on span {span.span_id} is not a number")
    return value


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
    return [node_from_mapping(item, i, span, key) for i, item in enumerate(value)]


def conversation_id(spans: Iterable[Span]) -> str:
    """The conversation a trace belongs to: OpenInference `session.id`, GenAI `gen_ai.conversation.id`,
    OpenLLMetry's `session_id` association property, on whichever span carries it: instrumentations
    write it on their own spans, not on the app's root span (tests/instrumentation/test_conversations.py)."""
    for span in spans:
        for key in _CONVERSATION_KEYS:
            value = span.attributes.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return str(value)[:200]
    return ""


_CONVERSATION_KEYS = (
    "session.id",
    "gen_ai.conversation.id",
    "traceloop.association.properties.session_id",
    attributes.CONVERSATION_ID,
)


_ROUTE_KEYS = (attributes.ROUTE, "http.route", "url.template")


def route(spans: Sequence[Span]) -> str:
    """The trace's route: `rag.route`, `http.route` or `url.template`, on a root span first. Read by
    extraction and, before it, by sampling rules on `route` (collector/sampling/sampler.py)."""
    roots_first = sorted(spans, key=lambda s: not s.is_root)
    return next((v for s in roots_first for k in _ROUTE_KEYS if (v := text(s, k))), "")


SERVICE_VERSION = "service.version"  # OTel resource attribute
# The prompt template's version, in order of preference: OpenInference (`SpanAttributes.
# LLM_PROMPT_TEMPLATE_VERSION`), OpenLLMetry (`traceloop.prompt.version`, an integer from Traceloop's
# prompt registry) and ragpulse's own attribute for apps that state it themselves.
PROMPT_VERSION_KEYS = ("llm.prompt_template.version", "traceloop.prompt.version", attributes.PROMPT_VERSION)


def _version_text(value: Any) -> str:
    """A version as text: strings and integers (Traceloop's are ints); anything else is no version.

    Lenient on purpose: a version is a label for grouping scores, not RAG data, so an odd value never
    dead-letters a trace."""
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value).strip()[:100]
    return ""


def service_version(anchor: Span, spans: Iterable[Span]) -> str:
    """`service.version` of the anchor span's resource, else of any span of the trace."""
    for span in (anchor, *spans):
        if value := _version_text(span.resource.get(SERVICE_VERSION)):
            return value
    return ""


def prompt_version(anchor: Span, spans: Iterable[Span]) -> str:
    """The first prompt-version attribute found, on the anchor span first, then on any span."""
    ordered = (anchor, *spans)
    for key in PROMPT_VERSION_KEYS:
        for span in ordered:
            if value := _version_text(span.attributes.get(key)):
                return value
    return ""


def parent_map(spans: Iterable[Span]) -> dict[str, str]:
    return {s.span_id: s.parent_span_id for s in spans}


def outermost(spans: Sequence[Span], all_spans: Sequence[Span]) -> list[Span]:
    """Drop spans that have an ancestor in `spans` (instrumentations nest public and private calls).

    Ancestry is followed through every span of the trace, not only through `spans`: a framework span
    may sit between the public retrieval call and the private one.
    """
    ids = {s.span_id for s in spans}
    parents = parent_map(all_spans)
    return [s for s in spans if not any(a in ids for a in ancestors(s.span_id, parents))]


def innermost(spans: Sequence[Span], all_spans: Sequence[Span]) -> list[Span]:
    """Drop spans that have a descendant in `spans` (an LLM wrapper around the actual LLM call)."""
    ids = {s.span_id for s in spans}
    parents = parent_map(all_spans)
    wrapped = {a for s in spans for a in ancestors(s.span_id, parents) if a in ids}
    return [s for s in spans if s.span_id not in wrapped]


def ancestors(span_id: str, parents: dict[str, str]) -> list[str]:
    """Ids of the span's parent, grandparent, ... (innermost first; cycles in bad input stop it)."""
    out, current, seen = [], parents.get(span_id, ""), {span_id}
    while current and current not in seen:
        seen.add(current)
        out.append(current)
        current = parents.get(current, "")
    return out
