"""OpenLLMetry (Traceloop) conventions.

Workflow/task spans carry `traceloop.entity.input` / `traceloop.entity.output` as JSON
(input usually {"args": [...], "kwargs": {...}}); retriever tasks output a list of documents;
LLM spans use the older flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from collector.conventions.common import (
    ExtractionError,
    Found,
    by_time,
    indexed,
    node_from_mapping,
    parse_json,
    require,
    text,
)
from collector.records import RetrievedNode
from collector.spans import Span

KIND, NAME = "traceloop.span.kind", "traceloop.entity.name"
INPUT, OUTPUT = "traceloop.entity.input", "traceloop.entity.output"
_QUERY_KEYS = ("question", "query", "input", "user_input", "message", "prompt")
_ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")


def _pick(value: Any, keys: tuple[str, ...]) -> str | None:
    """The first string found under the preferred keys, then in args/kwargs, depth-first."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), str):
                return value[key]
        for nested in ("kwargs", "args", "inputs", "outputs"):
            if nested in value and (found := _pick(value[nested], keys)) is not None:
                return found
    if isinstance(value, list):
        return next((found for item in value if (found := _pick(item, keys)) is not None), None)
    return None


def _entity(span: Span, key: str) -> Any:
    raw = text(span, key)
    if raw is None:
        return None
    return parse_json(span, key, raw) if raw[:1] in '{["' else raw


def _documents(span: Span) -> list[RetrievedNode] | None:
    output = _entity(span, OUTPUT)
    if isinstance(output, dict):
        output = output.get("documents", output.get("outputs"))
    if not isinstance(output, list) or not output:
        return None
    if not all(isinstance(d, dict | str) for d in output):
        raise ExtractionError("invalid_retrieval_json", f"{OUTPUT} of retriever span {span.span_id}")
    return [node_from_mapping(doc, i, span, OUTPUT) for i, doc in enumerate(output)]


def _is_retriever(span: Span) -> bool:
    name = f"{span.attributes.get(NAME, '')} {span.name}".lower()
    return "retriev" in name or "search" in name


class OpenLLMetry:
    name = "openllmetry"

    def find(self, spans: Sequence[Span]) -> Found | None:
        ordered = by_time(spans)
        entities = [
            s for s in ordered if KIND in s.attributes or INPUT in s.attributes or OUTPUT in s.attributes
        ]
        llms = [s for s in ordered if any(k.startswith("gen_ai.completion.") for k in s.attributes)]
        if not entities and not llms:
            return None
        workflows = sorted(
            (s for s in entities if s.attributes.get(KIND) in ("workflow", "agent") or s.is_root),
            key=lambda s: not s.is_root,
        )
        workflow = workflows[0] if workflows else None
        query = _pick(_entity(workflow, INPUT), _QUERY_KEYS) if workflow else None
        anchor, response = workflow, _pick(_entity(workflow, OUTPUT), _ANSWER_KEYS) if workflow else None
        if response is None and llms:
            anchor = llms[-1]
            completions = indexed(anchor, "gen_ai.completion.")
            response = next(
                (c["content"] for c in reversed(completions.values()) if isinstance(c.get("content"), str)),
                None,
            )
        if query is None and llms:
            prompts = indexed(llms[0], "gen_ai.prompt.")
            query = next((p["content"] for p in reversed(prompts.values()) if p.get("role") == "user"), None)
        if response is None and not llms:
            return None
        query, response = require(query, response, self.name)
        nodes = [n for s in entities if s is not workflow and _is_retriever(s) for n in _documents(s) or []]
        model = next(
            (
                m
                for s in reversed(llms)
                for k in ("gen_ai.response.model", "gen_ai.request.model")
                if (m := text(s, k))
            ),
            "",
        )
        return Found(query=query, response=response, anchor=anchor or llms[-1], nodes=nodes, model=model)
