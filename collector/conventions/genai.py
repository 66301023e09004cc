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
Image parts are `{type: blob, modality: image, mime_type, content: <base64>}` or `{type: uri,
modality: image, uri}` (GenAI semconv), or OpenAI's `{type: image_url, image_url: {url}}` where an
instrumentation records the request's content as it was (OpenLLMetry's flattened prompts, GenAI events).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from collector.conventions.common import image_passage, loads_lenient, nodes_from_json, outermost
from collector.conventions.generations import Generation, Message, Retrieval, TraceShapes
from collector.spans import Span

QUERY, DOCUMENTS = "gen_ai.retrieval.query.text", "gen_ai.retrieval.documents"
INPUT, OUTPUT, SYSTEM = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_INFERENCE_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_RETRIEVAL_OPERATIONS = frozenset({"retrieval", "retrieve", "vector_db_retrieve"})  # the last: OpenLLMetry
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
            out.append(Message(str(role), text, content_images(content)))
        elif isinstance(item, str):
            out.append(Message(default_role, item))
    return out


def _span_content(span: Span) -> tuple[list[Message], list[Message]]:
    """(inputs, outputs) from span attributes, the details event, or per-message events."""
    sources = [span.attributes] + [e.attributes for e in span.events if e.name == DETAILS_EVENT]
    inputs: list[Message] = []
    outputs: list[Message] = []
    for attributes in sources:
        inputs += messages_from(attributes.get(SYSTEM), "system") + messages_from(attributes.get(INPUT))
        outputs += messages_from(attributes.get(OUTPUT), "assistant")
    for event in span.events:
        name = event.name or str(event.attributes.get("event.name", ""))
        body = loads_lenient(event.body)
        if name in _MESSAGE_EVENTS and isinstance(body, dict):
            content = body.get("content")
            inputs.append(Message(_MESSAGE_EVENTS[name], content_text(content), content_images(content)))
        elif name == "gen_ai.choice" and isinstance(body, dict):
            outputs += messages_from([body], "assistant")
    return inputs, outputs


def _operation(span: Span) -> str:
    operation = span.attributes.get("gen_ai.operation.name")
    return operation if isinstance(operation, str) else ""


def is_inference(span: Span) -> bool:
    return (
        _operation(span) in _INFERENCE_OPERATIONS
        or OUTPUT in span.attributes
        or any(e.name == DETAILS_EVENT or e.name == "gen_ai.choice" for e in span.events)
    )


def generation(span: Span) -> Generation:
    inputs, outputs = _span_content(span)
    response = next((m.text for m in reversed(outputs) if m.text), None)
    model = span.attributes.get("gen_ai.response.model") or span.attributes.get("gen_ai.request.model")
    return Generation(span, inputs, response, model if isinstance(model, str) else "")


class GenAI:
    name = "gen_ai"
    looks_for = (
        f"{QUERY} / {DOCUMENTS} on retrieval spans; gen_ai.operation.name=chat with {INPUT}/{OUTPUT}, "
        f"{SYSTEM}, the {DETAILS_EVENT} event, or gen_ai.*.message / gen_ai.choice log events"
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
        shapes.generations = [generation(s) for s in spans if is_inference(s)]
        return shapes
