"""OpenLLMetry (Traceloop) conventions.

Workflow and task spans carry `traceloop.entity.input` / `traceloop.entity.output` as JSON,
often encoded twice (LlamaIndex's retriever output is a list of JSON strings of
`{"node": {...}, "score": ...}`); inputs look like `{"args": [...], "kwargs": {...}}` or the
framework's own keywords (`{"str_or_query_bundle": ...}`, `{"question": ...}`). Retrieval is a task
whose entity name says so (`VectorIndexRetriever.task`, `VectorStoreRetriever.task`). LLM spans use
the flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` attributes, or, in newer releases, the
GenAI `gen_ai.input.messages` / `gen_ai.output.messages`. A `tool` span (`traceloop.span.kind = tool`,
a LangChain tool or a `@tool`-decorated function) is a tool call: its entity output is the result, read
as passages (`tools`), its input the arguments.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.conventions import genai
from collector.conventions.common import (
    indexed,
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

KIND, NAME = "traceloop.span.kind", "traceloop.entity.name"
INPUT, OUTPUT = "traceloop.entity.input", "traceloop.entity.output"
_QUESTION_KEYS = (
    "question",
    "query",
    "query_str",
    "str_or_query_bundle",
    "input",
    "user_input",
    "message",
    "prompt",
)
_ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")
_DOCUMENT_KEYS = ("documents", "nodes", "source_nodes", "outputs", "output")


def _chain_io(span: Span, direction: str) -> str | None:
    if direction == "input":
        return pick_text(span.attributes.get(INPUT), _QUESTION_KEYS)
    return pick_text(span.attributes.get(OUTPUT), _ANSWER_KEYS)


def _documents(span: Span) -> list[RetrievedNode]:
    output = loads_lenient(span.attributes.get(OUTPUT))
    if isinstance(output, dict):
        output = next((loads_lenient(output[k]) for k in _DOCUMENT_KEYS if k in output), None)
    if not isinstance(output, list):
        return []
    items = [loads_lenient(item) for item in output]
    return [
        node_from_mapping(item, i, span, OUTPUT)
        for i, item in enumerate(items)
        if isinstance(item, dict | str)
    ]


def _is_tool(span: Span) -> bool:
    return span.attributes.get(KIND) == "tool"


def _is_retriever(span: Span) -> bool:
    """A retriever task (`VectorIndexRetriever.task`), not a workflow that merely contains one."""
    name = f"{span.attributes.get(NAME, '')} {span.name}".lower()
    return "retriev" in name and span.attributes.get(KIND) not in ("workflow", "tool")


def _is_llm(span: Span) -> bool:
    """An LLM call recorded by OpenLLMetry (its own markers; plain GenAI spans are the GenAI module's)."""
    attributes = span.attributes
    ours = KIND in attributes or "llm.request.type" in attributes
    return any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in attributes) or (
        ours and (genai.OUTPUT in attributes or attributes.get("llm.request.type") in ("chat", "completion"))
    )


def _generation(span: Span) -> Generation:
    found = genai.generation(span)  # newer releases: gen_ai.input.messages / gen_ai.output.messages
    prompts = indexed(span, "gen_ai.prompt.")
    messages = found.messages or [
        Message(
            str(p.get("role", "user")),
            genai.content_text(p.get("content")),
            genai.content_images(p.get("content")),
        )
        for p in prompts.values()
    ]
    if not messages and INPUT in span.attributes:  # an LLM task: its input is the prompt
        prompt = pick_text(span.attributes[INPUT], ("prompt", "messages", "args"))
        messages = [Message("user", prompt)] if prompt else []
    completions = [genai.content_text(c.get("content")) for c in indexed(span, "gen_ai.completion.").values()]
    response = found.response or next((c for c in reversed(completions) if c), None)
    return Generation(span, messages, response, found.model)


class OpenLLMetry:
    name = "openllmetry"
    looks_for = (
        f"{KIND} workflow/task spans with {INPUT}/{OUTPUT} (retriever tasks' output = documents, "
        "tool spans' output = passages), "
        "LLM spans with gen_ai.prompt.N.* / gen_ai.completion.N.* or gen_ai.input/output.messages"
    )

    def shapes(self, spans: Sequence[Span]) -> TraceShapes:
        shapes = TraceShapes()
        entities = [s for s in spans if INPUT in s.attributes or OUTPUT in s.attributes]
        found = {s.span_id: nodes for s in entities if _is_retriever(s) and (nodes := _documents(s))}
        for span in outermost([s for s in entities if s.span_id in found], spans):
            query = pick_text(span.attributes.get(INPUT), _QUESTION_KEYS)
            shapes.retrievals.append(Retrieval(span, query, found[span.span_id]))
        for span in outermost([s for s in entities if _is_tool(s)], spans):
            nodes = tool_nodes(span.attributes.get(OUTPUT), span, OUTPUT)
            shapes.retrievals.append(
                Retrieval(span, argument_text(span.attributes.get(INPUT)), nodes, tool=True)
            )
        llms = [s for s in spans if _is_llm(s)]
        shapes.generations = [_generation(s) for s in innermost(llms, spans)]
        llm_ids = {id(s) for s in llms}  # objects, not span ids: bad input may repeat an id
        shapes.chains = [
            Chain(s, _chain_io)
            for s in entities
            if id(s) not in llm_ids and not _is_retriever(s) and not _is_tool(s)
        ]
        return shapes
