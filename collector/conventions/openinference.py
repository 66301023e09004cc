"""OpenInference (Arize Phoenix, LlamaIndex/LangChain instrumentors).

Span kinds in `openinference.span.kind`; the chain's `input.value`/`output.value` hold query and
answer (JSON when `*.mime_type` is application/json), RETRIEVER spans hold
`retrieval.documents.N.document.{id,content,score}`, LLM spans `llm.model_name` and output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from collector.conventions.common import Found, by_time, indexed, node_from_mapping, require, text
from collector.records import RetrievedNode
from collector.spans import Span

KIND = "openinference.span.kind"
_QUERY_KEYS = ("query", "question", "input", "user_input", "query_str", "message")
_ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")


def _value(span: Span, direction: str, keys: tuple[str, ...]) -> str | None:
    raw = text(span, f"{direction}.value")
    if raw is None or text(span, f"{direction}.mime_type") != "application/json":
        return raw
    try:
        document = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    if isinstance(document, str):
        return document
    if isinstance(document, dict):
        return next((document[k] for k in keys if isinstance(document.get(k), str)), raw)
    return raw


def _documents(span: Span) -> list[RetrievedNode]:
    nodes = []
    for position, fields in indexed(span, "retrieval.documents.").items():
        document = {k.removeprefix("document."): v for k, v in fields.items()}
        nodes.append(node_from_mapping(document, position, span, "retrieval.documents"))
    return nodes


class OpenInference:
    name = "openinference"

    def find(self, spans: Sequence[Span]) -> Found | None:
        kinds = {s.span_id: str(s.attributes.get(KIND, "")).upper() for s in spans if KIND in s.attributes}
        if not kinds:
            return None
        ordered = by_time(s for s in spans if s.span_id in kinds)
        chains = sorted(
            (s for s in ordered if kinds[s.span_id] in ("CHAIN", "AGENT")), key=lambda s: not s.is_root
        )
        retrievers = [s for s in ordered if kinds[s.span_id] == "RETRIEVER"]
        llms = [s for s in ordered if kinds[s.span_id] == "LLM"]
        if not retrievers and not llms:
            return None
        chain = chains[0] if chains else None
        query = _value(chain, "input", _QUERY_KEYS) if chain else None
        if query is None and retrievers:
            query = _value(retrievers[0], "input", _QUERY_KEYS)
        anchor, response = chain, _value(chain, "output", _ANSWER_KEYS) if chain else None
        if response is None and llms:
            anchor = llms[-1]
            response = _value(anchor, "output", _ANSWER_KEYS) or text(
                anchor, "llm.output_messages.0.message.content"
            )
        if response is None and not llms:  # retrieval without generation is not an answer to evaluate
            return None
        query, response = require(query, response, self.name)
        nodes = [node for retriever in retrievers for node in _documents(retriever)]
        model = next((m for s in reversed(llms) if (m := text(s, "llm.model_name"))), "")
        return Found(
            query=query, response=response, anchor=anchor or (llms or ordered)[-1], nodes=nodes, model=model
        )
