"""OpenInference (Arize Phoenix; the LlamaIndex, LangChain, Haystack and OpenAI instrumentors).

Span kinds in `openinference.span.kind`. CHAIN/AGENT spans hold the app's question and answer in
`input.value`/`output.value` (JSON when `*.mime_type` is application/json); RETRIEVER spans hold
`retrieval.documents.N.document.{id,content,score,metadata}` (metadata is a JSON string, per the
spec); RERANKER spans hold `reranker.output_documents.N.document.*`, the passages actually kept;
LLM spans hold `llm.input_messages.N.message.{role,content}` (or the list form
`message.contents.M.message_content.{type,text}`, where an image part is `type = image` with
`message_content.image.image.url`), the same for `llm.output_messages`, and `llm.model_name`.
A retrieval document whose content is an image URL or data URI is an image passage as it stands.
TOOL spans (`tool.name`, the arguments in `input.value`, the result in `output.value`) are tool calls
whose result is read as passages (`tools`); an LLM span's `tool` role messages hold the same results.
Instrumentors nest a public call around a private one (`retrieve` around
`_retrieve`, `predict` around `complete`): the outer retrieval and the inner LLM call count.

LlamaIndex's CitationQueryEngine re-chunks the retrieved nodes before the LLM sees them: the
synthesizer's CHAIN span gets `text_chunks` "Source 1:\n...", "Source 2:\n..." (numbered across all
nodes), and the answer's [n] cites the n-th chunk. Those chunks replace the retrieval's nodes, each
keeping its node's id and score (as the engine's own citation nodes keep the score), so that markers
name the passage the LLM was shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from collector.conventions.common import (
    image_passage,
    indexed,
    indexed_items,
    innermost,
    loads_lenient,
    node_from_mapping,
    outermost,
    pick_text,
)
from collector.conventions.generations import Chain, Generation, Retrieval, TraceShapes
from collector.conventions.prompt_context import Message
from collector.conventions.tools import argument_text, tool_nodes
from collector.records import RetrievedNode
from collector.spans import Span

KIND = "openinference.span.kind"
_QUESTION_KEYS = ("query_str", "question", "query", "input", "user_input", "str_or_query_bundle", "message")
_ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")
_SOURCE_LABEL = re.compile(r"Source (\d+):\n")  # CitationQueryEngine's chunk label


def _io(span: Span, direction: str, keys: Sequence[str]) -> str | None:
    raw = span.attributes.get(f"{direction}.value")
    if not isinstance(raw, str):
        return None
    if span.attributes.get(f"{direction}.mime_type") != "application/json":
        return raw or None
    return pick_text(raw, keys)


def _chain_io(span: Span, direction: str) -> str | None:
    return _io(span, direction, _QUESTION_KEYS if direction == "input" else _ANSWER_KEYS)


def _documents(span: Span, prefix: str) -> list[RetrievedNode]:
    nodes = []
    for position, fields in indexed(span, prefix).items():
        document = {k.removeprefix("document."): v for k, v in fields.items()}
        nodes.append(node_from_mapping(document, position, span, prefix.rstrip(".")))
    if nodes and not any("document.id" in f for f in indexed(span, prefix).values()):
        nodes = _ids_from_output(span, nodes)
    return nodes


def _ids_from_output(span: Span, nodes: list[RetrievedNode]) -> list[RetrievedNode]:
    """The LangChain instrumentor leaves out `document.id`; its `output.value` JSON has the documents' ids."""
    output = loads_lenient(span.attributes.get("output.value"))
    documents = output.get("documents") if isinstance(output, dict) else None
    if not isinstance(documents, list):
        return nodes
    by_text = {
        d.get("page_content"): d.get("id")
        for d in documents
        if isinstance(d, dict)
        and isinstance(d.get("page_content"), str)
        and isinstance(d.get("id"), str | int)
        and d.get("id") != ""
    }
    return [RetrievedNode(str(by_text.get(n.text, n.id)), n.text, n.score) for n in nodes]


def _message_text(fields: dict[str, Any]) -> str:
    content = fields.get("message.content")
    if isinstance(content, str):
        return content
    parts = indexed_items(fields, "message.contents.").values()
    return "".join(
        p["message_content.text"]
        for p in parts
        if p.get("message_content.type", "text") == "text" and isinstance(p.get("message_content.text"), str)
    )


def _message_images(fields: dict[str, Any]) -> list[str]:
    parts = indexed_items(fields, "message.contents.").values()
    declared = [
        p.get("message_content.image.image.url") for p in parts if p.get("message_content.type") == "image"
    ]
    return [image for reference in declared if (image := image_passage(reference))]


def _messages(span: Span, prefix: str) -> list[Message]:
    return [
        Message(str(fields.get("message.role", "")), _message_text(fields), _message_images(fields))
        for fields in indexed(span, prefix).values()
    ]


def _generation(span: Span) -> Generation:
    inputs = _messages(span, "llm.input_messages.")
    if not inputs:  # completion-style LLMs record `llm.prompts`
        prompts = span.attributes.get("llm.prompts")
        prompts = [prompts] if isinstance(prompts, str) else prompts
        if isinstance(prompts, list):
            inputs = [Message("user", p) for p in prompts if isinstance(p, str)]
    outputs = [m.text for m in _messages(span, "llm.output_messages.") if m.text]
    response = outputs[-1] if outputs else _io(span, "output", _ANSWER_KEYS)
    model = span.attributes.get("llm.model_name") or span.attributes.get("llm.response.model_name")
    model = model if isinstance(model, str) else ""
    provider = span.attributes.get("llm.provider")
    if isinstance(provider, str) and provider and model.lower().startswith(f"{provider.lower()}/"):
        model = model[len(provider) + 1 :]  # LiteLLM's `openai/gpt-4o-mini`: the model, not the route
    return Generation(span, inputs, response, model)


def _citation_chunks(span: Span) -> list[tuple[str, str]]:
    """(chunk, its text without the label) of the synthesizer input's `text_chunks`, when they are
    CitationQueryEngine's chunks numbered from 1; else nothing."""
    if span.attributes.get("input.mime_type") != "application/json":
        return []
    value = loads_lenient(span.attributes.get("input.value"))
    chunks = value.get("text_chunks") if isinstance(value, dict) else None
    if not isinstance(chunks, list):
        return []
    found = []
    for number, chunk in enumerate(chunks, 1):
        label = _SOURCE_LABEL.match(chunk) if isinstance(chunk, str) else None
        if label is None or int(label.group(1)) != number:
            return []
        found.append((label.string, label.string[label.end() :]))
    return found


def _cite_chunks(chains: list[Span], retrievals: list[Retrieval]) -> None:
    """Replace the nodes of the retrieval each set of chunks was cut from: the last one that ended
    before the chunks' span. The first span holding them counts (the synthesizer nests calls that
    pass the chunks on, packed)."""
    cut: set[str] = set()
    for span in chains:
        chunks = _citation_chunks(span)
        before = [r for r in retrievals if r.nodes and r.span.end_ns <= span.start_ns]
        if not chunks or not before:
            continue
        retrieval = max(before, key=lambda r: r.span.end_ns)
        if retrieval.span.span_id in cut:
            continue
        cut.add(retrieval.span.span_id)
        nodes = []
        for position, (chunk, body) in enumerate(chunks):
            words = " ".join(body.split())
            source = next((n for n in retrieval.nodes if words and words in " ".join(n.text.split())), None)
            node_id, score = (source.id, source.score) if source else (str(position), None)
            nodes.append(RetrievedNode(node_id, chunk, score))
        retrieval.nodes = nodes


class OpenInference:
    name = "openinference"
    looks_for = (
        f"{KIND} = CHAIN/AGENT (input.value, output.value), RETRIEVER (retrieval.documents.N.document.*), "
        "LLM (llm.input_messages, llm.output_messages or output.value), TOOL (output.value: passages)"
    )

    def shapes(self, spans: Sequence[Span]) -> TraceShapes:
        kinds = {s.span_id: str(s.attributes.get(KIND, "")).upper() for s in spans if KIND in s.attributes}
        shapes = TraceShapes()
        if not kinds:
            return shapes
        of_kind = lambda *wanted: [s for s in spans if kinds.get(s.span_id) in wanted]  # noqa: E731
        rerankers = of_kind("RERANKER")
        for span in outermost(of_kind("RETRIEVER"), spans):
            nodes = _documents(span, "retrieval.documents.")
            shapes.retrievals.append(Retrieval(span, _io(span, "input", _QUESTION_KEYS), nodes))
        for span in rerankers:  # the reranked passages replace what their retrievals returned
            nodes = _documents(span, "reranker.output_documents.")
            if nodes:
                shapes.retrievals = [r for r in shapes.retrievals if r.span.end_ns > span.start_ns]
                query = span.attributes.get("reranker.query")
                shapes.retrievals.append(Retrieval(span, query if isinstance(query, str) else None, nodes))
        shapes.retrievals = [r for r in shapes.retrievals if r.nodes] or shapes.retrievals
        for span in outermost(of_kind("TOOL"), spans):
            nodes = tool_nodes(span.attributes.get("output.value"), span, "output.value")
            query = argument_text(span.attributes.get("input.value"))
            shapes.retrievals.append(Retrieval(span, query, nodes, tool=True))
        if shapes.retrievals:
            _cite_chunks(sorted(of_kind("CHAIN"), key=lambda s: s.start_ns), shapes.retrievals)
        shapes.generations = [_generation(s) for s in innermost(of_kind("LLM"), spans)]
        shapes.chains = [Chain(s, _chain_io) for s in of_kind("CHAIN", "AGENT")]
        return shapes
