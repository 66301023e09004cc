"""OpenTelemetry GenAI semantic conventions (and the official `opentelemetry-instrumentation-openai-v2`).

Retrieval spans carry `gen_ai.retrieval.query.text` and `gen_ai.retrieval.documents` (JSON; the
semconv schema has `id` and `score`, content only when the app opts in). Inference spans carry the
content in one of three places, depending on the instrumentation's version and settings:
- on the span: `gen_ai.input.messages` / `gen_ai.output.messages` (JSON lists of
  {role, parts: [{type: text, content}]}) and `gen_ai.system_instructions`;
- in one event `gen_ai.client.inference.operation.details` holding those same attributes;
- in per-message events (log records linked to the span, attached by the assembler):
  `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`
  with `{content}` bodies, and `gen_ai.choice` with `{message: {content}}`.
The model is `gen_ai.response.model`, else `gen_ai.request.model`.
Tool calls are `execute_tool` spans with `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`
(Pydantic AI's older formats: `tool_arguments` / `tool_response`): retrievals read by `tools`. Their
results also come back in the next call's messages: a `tool` message, or a `tool_call_response` part
(`{id, name, response|result}`, Pydantic AI puts it in a `user` message), read as a `tool` message.
Image parts are `{type: blob, modality: image, mime_type, content: <base64>}` or `{type: uri,
modality: image, uri}` (GenAI semconv), or OpenAI's `{type: image_url, image_url: {url}}` where an
instrumentation records the request's content as it was (OpenLLMetry's flattened prompts, GenAI events).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from collector.conventions.common import image_passage, innermost, loads_lenient, nodes_from_json, outermost
from collector.conventions.generations import Generation, Retrieval, TraceShapes
from collector.conventions.prompt_context import Message
from collector.conventions.tools import argument_text, tool_nodes
from collector.spans import Event, Span

QUERY, DOCUMENTS = "gen_ai.retrieval.query.text", "gen_ai.retrieval.documents"
INPUT, OUTPUT, SYSTEM = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
RESPONSE_ID = "gen_ai.response.id"
_INFERENCE_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_RETRIEVAL_OPERATIONS = frozenset({"retrieval", "retrieve", "vector_db_retrieve"})  # the last: OpenLLMetry
TOOL_ARGUMENTS = ("gen_ai.tool.call.arguments", "tool_arguments")
TOOL_RESULT = ("gen_ai.tool.call.result", "tool_response")
_TOOL_RESPONSE_PARTS = frozenset({"tool_call_response", "tool_result", "function_response"})
_MESSAGE_EVENTS = {f"gen_ai.{role}.message": role for role in ("system", "user", "assistant", "tool")}


def content_text(content: Any) -> str:
    """Text of a message's content: a string, or a list of parts ({type: text, content|text})."""
    content = loads_lenient(content)
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type", "text") in ("text", "input_text", "output_text"):
            value = part.get("content", part.get("text"))
            texts.append(value if isinstance(value, str) else "")
    return "".join(texts)


def content_images(content: Any) -> list[str]:
    """Image passages of a message's content parts (the shapes in the module docstring)."""
    content = loads_lenient(content)
    parts = [content] if isinstance(content, dict) else content if isinstance(content, list) else []
    images = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "image_url":
            url = part.get("image_url")
            reference = url.get("url") if isinstance(url, dict) else url
        elif kind == "uri" and part.get("modality") == "image":
            reference = part.get("uri")
        elif kind == "blob" and part.get("modality") == "image":
            blob = part.get("content")
            mime = part.get("mime_type") or "image/unknown"
            reference = f"data:{mime};base64,{blob}" if isinstance(blob, str) else None
        else:
            continue
        if image := image_passage(reference):
            images.append(image)
    return images


def messages_from(value: Any, default_role: str = "") -> list[Message]:
    """Messages from a GenAI messages value (JSON string or list); anything malformed is skipped."""
    value = loads_lenient(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        item = loads_lenient(item)
        if isinstance(item, dict):
            message = item["message"] if isinstance(item.get("message"), dict) else {}
            content = item.get("parts", item.get("content"))
            text = content_text(content)
            if not text:  # a choice: {message: {content}}
                text = content_text(message.get("content"))
            role = item.get("role") or message.get("role") or default_role
            tool_results = _tool_responses(content)
            if text or not tool_results:
                out.append(Message(str(role), text, content_images(content)))
            out += [Message("tool", result) for result in tool_results]
        elif isinstance(item, str):
            out.append(Message(default_role, item))
    return out


def _tool_responses(content: Any) -> list[str]:
    """The results of a message's tool-call response parts, as text (JSON where structured)."""
    parts = loads_lenient(content)
    if not isinstance(parts, list):
        return []
    results = []
    for part in parts:
        if isinstance(part, dict) and part.get("type") in _TOOL_RESPONSE_PARTS:
            result = next((part[k] for k in ("response", "result", "content") if part.get(k) is not None), "")
            results.append(result if isinstance(result, str) else json.dumps(result, ensure_ascii=False))
    return results


def _span_content(span: Span, details: list[Event]) -> tuple[list[Message], list[Message]]:
    """(inputs, outputs) from span attributes, else its details event, else per-message events.

    One source only: OpenLIT writes the same messages on the span and in the details event, and the
    system prompt both as a `system` message and as `gen_ai.system_instructions`; read from every
    place, one prompt was three copies of its passages. The instructions count when no system
    message of the same text is among the input messages."""
    sources = [span.attributes, *(e.attributes for e in details)]
    chosen = next((a for a in sources if INPUT in a or OUTPUT in a or SYSTEM in a), {})
    inputs = messages_from(chosen.get(INPUT))
    stated = {m.text for m in inputs if m.role == "system"}
    system = [m for m in messages_from(chosen.get(SYSTEM), "system") if m.text not in stated]
    inputs, outputs = system + inputs, messages_from(chosen.get(OUTPUT), "assistant")
    for event in span.events if not chosen else ():
        name = event.name or str(event.attributes.get("event.name", ""))
        body = loads_lenient(event.body)
        if name in _MESSAGE_EVENTS and isinstance(body, dict):
            content = body.get("content")
            inputs.append(Message(_MESSAGE_EVENTS[name], content_text(content), content_images(content)))
        elif name == "gen_ai.choice" and isinstance(body, dict):
            outputs += messages_from([body], "assistant")
    return inputs, outputs


def details_by_span(spans: Sequence[Span]) -> dict[str, list[Event]]:
    """Each span's details events, a streamed call's moved to its own inference span.

    OpenLIT emits a streamed call's event when the stream is drained, after the call's span has
    ended, so the event carries the parent's span id (the app's request span): joined there, the
    request span became a second generation of the same answer. The event's `gen_ai.response.id`
    names the call; an event on a span that is no inference span goes to the span of that id."""
    calls = {
        rid: s.span_id
        for s in spans
        if _operation(s) in _INFERENCE_OPERATIONS and isinstance(rid := s.attributes.get(RESPONSE_ID), str)
    }
    found: dict[str, list[Event]] = {}
    for span in spans:
        own = _operation(span) in _INFERENCE_OPERATIONS
        for event in (e for e in span.events if e.name == DETAILS_EVENT):
            rid = event.attributes.get(RESPONSE_ID)
            target = span.span_id if own or not isinstance(rid, str) else calls.get(rid, span.span_id)
            found.setdefault(target, []).append(event)
    return found


def _operation(span: Span) -> str:
    operation = span.attributes.get("gen_ai.operation.name")
    return operation if isinstance(operation, str) else ""


def is_inference(span: Span, details: list[Event] | None = None) -> bool:
    return (
        _operation(span) in _INFERENCE_OPERATIONS
        or OUTPUT in span.attributes
        or bool(details)
        or any(
            (details is None and e.name == DETAILS_EVENT) or e.name == "gen_ai.choice" for e in span.events
        )
    )


def generation(span: Span, details: list[Event] | None = None) -> Generation:
    """The generation of one inference span; `details`: its details events (default: its own)."""
    own = [e for e in span.events if e.name == DETAILS_EVENT] if details is None else details
    inputs, outputs = _span_content(span, own)
    response = next((m.text for m in reversed(outputs) if m.text), None)
    model = span.attributes.get("gen_ai.response.model") or span.attributes.get("gen_ai.request.model")
    return Generation(span, inputs, response, model if isinstance(model, str) else "")


class GenAI:
    name = "gen_ai"
    looks_for = (
        f"{QUERY} / {DOCUMENTS} on retrieval spans; gen_ai.operation.name=chat with {INPUT}/{OUTPUT}, "
        f"{SYSTEM}, the {DETAILS_EVENT} event, or gen_ai.*.message / gen_ai.choice log events; "
        "execute_tool spans' gen_ai.tool.call.result and tool messages (tool results as passages)"
    )

    def shapes(self, spans: Sequence[Span]) -> TraceShapes:
        shapes = TraceShapes()
        retrievers = [
            s
            for s in spans
            if DOCUMENTS in s.attributes or QUERY in s.attributes or _operation(s) in _RETRIEVAL_OPERATIONS
        ]
        for span in outermost(retrievers, spans):
            query = span.attributes.get(QUERY)
            nodes = nodes_from_json(span, DOCUMENTS) or []
            shapes.retrievals.append(Retrieval(span, query if isinstance(query, str) else None, nodes))
        for span in (s for s in spans if _operation(s) == "execute_tool"):
            arguments = next((span.attributes[k] for k in TOOL_ARGUMENTS if k in span.attributes), None)
            key = next((k for k in TOOL_RESULT if k in span.attributes), TOOL_RESULT[0])
            nodes = tool_nodes(span.attributes.get(key), span, key)
            shapes.retrievals.append(Retrieval(span, argument_text(arguments), nodes, tool=True))
        details = details_by_span(spans)
        calls = [s for s in spans if is_inference(s, details.get(s.span_id, []))]
        # An agent span (`invoke_agent`) may carry the run's messages too: the model calls inside it
        # are the generations, the agent around them is not another one.
        shapes.generations = [generation(s, details.get(s.span_id, [])) for s in innermost(calls, spans)]
        return shapes
