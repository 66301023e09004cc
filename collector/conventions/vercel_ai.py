"""The Vercel AI SDK's own span attributes (`experimental_telemetry`; `LegacyOpenTelemetry` of
`@ai-sdk/otel` since AI SDK 7).

Every span carries `ai.operationId`. One `generateText` / `streamText` call writes an outer span
(`ai.generateText`: `ai.prompt` = JSON `{system?, prompt? | messages?}`, `ai.response.text` = the final
step's text) and, per step, an inner model call (`ai.generateText.doGenerate` / `ai.streamText.doStream`:
`ai.prompt.messages` = the JSON messages sent, `ai.response.text`, `ai.model.id`, `ai.response.model`,
and a few `gen_ai.*` such as `gen_ai.response.model`); each tool the model calls runs in an
`ai.toolCall` span (`ai.toolCall.name`, `ai.toolCall.args`, `ai.toolCall.result`: JSON of what
`execute` returned).

Read into the shared shapes: the outer span is a chain (its question is the last user message of
`ai.prompt`, its answer `ai.response.text`), the model calls are the generations (so one record per
answering step, anchored on the step that consumed the tool results, never also on the outer span), and
a tool call with a result is a tool retrieval: an agent answers from what its tools returned, split into
passages as every convention's tool results are (`tools`: a JSON list of strings or documents, an object
holding one, or text). With no tool call, the passages are read from the prompt (`prompt_context`), as
for any bare LLM call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from collector.conventions.common import loads_lenient
from collector.conventions.genai import messages_from
from collector.conventions.generations import Chain, Generation, Message, Retrieval, TraceShapes
from collector.conventions.tools import argument_text, tool_nodes
from collector.spans import Span

OPERATION = "ai.operationId"
PROMPT, MESSAGES, TEXT = "ai.prompt", "ai.prompt.messages", "ai.response.text"
TOOL_ARGS, TOOL_RESULT, TOOL_NAME = "ai.toolCall.args", "ai.toolCall.result", "ai.toolCall.name"
_CALLS = frozenset({"ai.generateText", "ai.streamText"})
_MODEL_CALLS = frozenset({f"{call}.{step}" for call in _CALLS for step in ("doGenerate", "doStream")})
_TOOL_CALL = "ai.toolCall"


def _operation(span: Span) -> str:
    value = span.attributes.get(OPERATION)
    return value if isinstance(value, str) else ""


def _text(span: Span, key: str) -> str | None:
    value = span.attributes.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _messages(value: Any) -> list[Message]:
    """AI SDK messages; a `tool` message's text is its results (`{type: tool-result, output: {type,
    value}}` parts), which a tool call run by the client, with no span of its own, leaves nowhere else."""
    value = loads_lenient(value)
    out: list[Message] = []
    for item in value if isinstance(value, list) else []:
        item = loads_lenient(item)
        parts = item.get("content") if isinstance(item, dict) and item.get("role") == "tool" else None
        if isinstance(parts, list):
            outputs = [
                p.get("output") for p in parts if isinstance(p, dict) and p.get("type") == "tool-result"
            ]
            results = [o.get("value") if isinstance(o, dict) else o for o in outputs]
            texts = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in results]
            out += [Message("tool", text) for text in texts if text]
        else:
            out += messages_from([item])
    return out


def prompt_messages(raw: Any) -> list[Message]:
    """The messages of `ai.prompt` (`{system, prompt | messages}`) or `ai.prompt.messages` (a list)."""
    value = loads_lenient(raw)
    if isinstance(value, list):
        return _messages(value)
    if not isinstance(value, dict):
        return []
    system = value.get("system")
    messages = [Message("system", system)] if isinstance(system, str) and system.strip() else []
    prompt = value.get("prompt")
    if isinstance(prompt, str):
        messages.append(Message("user", prompt))
    elif isinstance(prompt, list):  # `prompt` given as a message list
        messages += _messages(prompt)
    return messages + _messages(value.get("messages"))


def _chain_io(span: Span, direction: str) -> str | None:
    if direction == "output":
        return _text(span, TEXT)
    users = [m.text for m in prompt_messages(span.attributes.get(PROMPT)) if m.role == "user" and m.text]
    return users[-1] if users else None


def _generation(span: Span) -> Generation:
    model = next(
        (v for k in ("ai.response.model", "gen_ai.response.model", "ai.model.id") if (v := _text(span, k))),
        "",
    )
    return Generation(span, prompt_messages(span.attributes.get(MESSAGES)), _text(span, TEXT), model)


def _retrieval(span: Span) -> Retrieval:
    nodes = tool_nodes(span.attributes.get(TOOL_RESULT), span, TOOL_RESULT)
    return Retrieval(span, argument_text(span.attributes.get(TOOL_ARGS)), nodes, tool=True)


class VercelAI:
    name = "vercel_ai"
    looks_for = (
        f"{OPERATION} spans: ai.generateText/ai.streamText ({PROMPT}, {TEXT}), their doGenerate/doStream "
        f"steps ({MESSAGES}, {TEXT}) and ai.toolCall ({TOOL_ARGS}, {TOOL_RESULT})"
    )

    def shapes(self, spans: Sequence[Span]) -> TraceShapes:
        shapes = TraceShapes()
        for span in spans:
            operation = _operation(span)
            if operation in _MODEL_CALLS:
                shapes.generations.append(_generation(span))
            elif operation in _CALLS:
                shapes.chains.append(Chain(span, _chain_io))
            elif operation == _TOOL_CALL and TOOL_RESULT in span.attributes:
                shapes.retrievals.append(_retrieval(span))
        return shapes
