"""OpenTelemetry GenAI semantic conventions.

Retrieval spans carry `gen_ai.retrieval.query.text` and `gen_ai.retrieval.documents` (JSON);
inference spans carry `gen_ai.input.messages` / `gen_ai.output.messages` (JSON lists of
{role, parts: [{type: text, content}]}) and the model in `gen_ai.response.model`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from collector.conventions.common import (
    ExtractionError,
    Found,
    by_time,
    nodes_from_json,
    parse_json,
    require,
    text,
)
from collector.spans import Span

QUERY, DOCUMENTS = "gen_ai.retrieval.query.text", "gen_ai.retrieval.documents"
INPUT, OUTPUT = "gen_ai.input.messages", "gen_ai.output.messages"


def _message_text(message: Any) -> str | None:
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type", "text") == "text"]
        joined = "".join(t for t in texts if isinstance(t, str))
        return joined or None
    return None


def _messages(span: Span, key: str) -> list[Any] | None:
    raw = span.attributes.get(key)
    if raw is None:
        return None
    value = parse_json(span, key, raw) if isinstance(raw, str) else raw
    if not isinstance(value, list):
        raise ExtractionError("wrong_type", f"{key} on span {span.span_id} is not a list of messages")
    return value


class GenAI:
    name = "gen_ai"

    def find(self, spans: Sequence[Span]) -> Found | None:
        ordered = by_time(spans)
        retrievers = [s for s in ordered if DOCUMENTS in s.attributes or QUERY in s.attributes]
        llms = [s for s in ordered if OUTPUT in s.attributes]
        if not llms:  # retrieval without generation is not an answer to evaluate
            return None
        query = next((q for s in retrievers if (q := text(s, QUERY))), None)
        if query is None:
            for span in llms:
                users = [
                    m for m in _messages(span, INPUT) or [] if isinstance(m, dict) and m.get("role") == "user"
                ]
                query = _message_text(users[-1]) if users else query
        anchor = llms[-1]
        outputs = _messages(anchor, OUTPUT) or []
        response = next((t for m in reversed(outputs) if (t := _message_text(m))), None)
        query, response = require(query, response, self.name)
        nodes = [node for s in retrievers for node in nodes_from_json(s, DOCUMENTS) or []]
        model = text(anchor, "gen_ai.response.model") or text(anchor, "gen_ai.request.model") or ""
        return Found(query=query, response=response, anchor=anchor, nodes=nodes, model=model)
