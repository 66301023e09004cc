"""`record_rag`: state one RAG interaction on a span with ragpulse's own attributes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opentelemetry.trace import Span, SpanContext

from ragpulse_sdk import attributes

Node = str | Mapping[str, Any] | tuple[str, str, float | None]


def _node(node: Node, position: int) -> dict[str, Any]:
    if isinstance(node, str):
        return {"id": str(position), "content": node}
    if isinstance(node, tuple):
        node_id, content, score = node
        return {"id": node_id, "content": content, "score": score}
    content = node.get("content", node.get("text", node.get("page_content")))
    return {"id": str(node.get("id", position)), "content": content, "score": node.get("score")}


def record_rag(
    span: Span,
    query: str,
    nodes: Iterable[Node],
    response: str,
    *,
    model: str | None = None,
    route: str | None = None,
    expected_output: str | None = None,
    reference_contexts: Sequence[str] | None = None,
    prompt_version: str | None = None,
    reference_context_ids: Sequence[str] | None = None,
    baseline_output: str | None = None,
) -> None:
    """Record one RAG interaction on `span` with ragpulse's own attributes (`ragpulse_sdk.attributes`).

    Nodes may be strings, `(id, text, score)` tuples or mappings with id/content(text)/score.
    `reference_context_ids` (the ids of the documents that should be retrieved, e.g. for a canary
    question) lets the sidecar score retrieval ranking against the nodes' ids with no judge call.
    `baseline_output` (another version's answer to the same query, from a shadow or A/B run) lets it
    compare the two (`pairwise_preference`).
    """
    span.set_attribute(attributes.QUERY, query)
    span.set_attribute(attributes.RESPONSE, response)
    documents = [_node(n, i) for i, n in enumerate(nodes)]
    span.set_attribute(attributes.DOCUMENTS, json.dumps(documents, ensure_ascii=False))
    for key, value in (
        (attributes.MODEL, model),
        (attributes.ROUTE, route),
        (attributes.EXPECTED_OUTPUT, expected_output),
        (attributes.PROMPT_VERSION, prompt_version),
        (attributes.BASELINE_OUTPUT, baseline_output),
    ):
        if value is not None:
            span.set_attribute(key, value)
    for key, strings in (
        (attributes.REFERENCE_CONTEXTS, reference_contexts),
        (attributes.REFERENCE_CONTEXT_IDS, reference_context_ids),
    ):
        if strings is not None:
            span.set_attribute(key, json.dumps([str(s) for s in strings], ensure_ascii=False))


def record_feedback(
    span: Span,
    value: bool | float | str,
    *,
    answer: SpanContext | None = None,
    metric: str | None = None,
    comment: str | None = None,
) -> None:
    """Record a user's verdict on an answer: `value` is thumbs (True/False, "up"/"down", 👍/👎) or a
    score 0..1. `answer` is the answer span's context when the feedback arrives later, in another trace
    (keep `span.get_span_context()` of the answer, or rebuild it from the ids the app returned to its
    client); `metric` narrows it to what the human judged (e.g. "faithfulness"). The sidecar matches it
    with the judge's verdicts on that answer (docs/feedback.md)."""
    span.set_attribute(attributes.FEEDBACK, value)
    if answer is not None:
        span.set_attribute(attributes.FEEDBACK_TRACE_ID, format(answer.trace_id, "032x"))
        span.set_attribute(attributes.FEEDBACK_SPAN_ID, format(answer.span_id, "016x"))
    for key, text in ((attributes.FEEDBACK_METRIC, metric), (attributes.FEEDBACK_COMMENT, comment)):
        if text is not None:
            span.set_attribute(key, text)
