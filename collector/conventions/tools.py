"""Retrieval inside tool calls: an agent's tool result is the context its next generation consumed.

An agent that calls a search tool and answers from its result is RAG without a retriever span. Each
convention finds its tool calls (GenAI `execute_tool` spans, OpenInference TOOL spans, OpenLLMetry
`tool` spans) and reads them here into a `Retrieval` marked as a tool call; a generation's own prompt
also carries tool results (`tool` messages, GenAI `tool_call_response` parts), read when no tool span
fed it. A result becomes passages by its shape:

- a JSON list: each item a passage, a string or a document (`{id, text|content|page_content}`,
  LangChain content blocks `{type: text, text}`), ids where the items have them;
- a JSON object: its documents list (`documents`, `results`, `passages`, ...), a document, or a
  message wrapping the result (`{content: ...}`, LangChain's ToolMessage as OpenInference and
  OpenLLMetry dump it: `{type: tool, data: {content, tool_call_id}}`);
- text: split as prompt context is (`prompt_context.split_passages`: blank lines, `[1]` markers).

The tool's arguments are not the question (`{"query": "..."}`); where a question must come from them,
their text is taken.
"""

from __future__ import annotations

import ast
from typing import Any

from collector.conventions.common import loads_lenient, node_from_mapping, pick_text
from collector.conventions.prompt_context import PromptContextConfig, split_passages
from collector.records import RetrievedNode
from collector.spans import Span

_ARGUMENT_KEYS = ("query", "question", "search_query", "q", "input", "text", "prompt", "keywords")
_LIST_KEYS = ("documents", "results", "passages", "nodes", "source_nodes", "items", "hits", "chunks")
_WRAPPER_KEYS = ("content", "output", "result", "return_value", "response", "text", "data")
_DOCUMENT_KEYS = ("page_content", "pageContent", "document", "node")
_SPLIT = PromptContextConfig()
_MAX_REPR_CHARS = 100_000


def decoded(value: Any) -> Any:
    """JSON (also encoded twice), or a Python literal as frameworks write arguments (`{'query': 'x'}`)."""
    value = loads_lenient(value)
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "[") and len(value) <= _MAX_REPR_CHARS:
        try:
            return ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return value
    return value


def argument_text(value: Any) -> str | None:
    """The text a tool was asked about: `{"query": "..."}` -> "...", a bare string as it is."""
    found = pick_text(decoded(value), _ARGUMENT_KEYS)
    return found.strip() if found and found.strip() else None


def tool_nodes(value: Any, span: Span, key: str, depth: int = 4) -> list[RetrievedNode]:
    """The passages of one tool result (shapes in the module docstring); nothing for an empty one."""
    value = decoded(value)
    for _ in range(depth):
        if not isinstance(value, dict) or _is_document(value):
            break
        inner = next((value[k] for k in (*_LIST_KEYS, *_WRAPPER_KEYS) if value.get(k) is not None), None)
        if inner is None:
            break
        value = decoded(inner)
    if isinstance(value, list):
        items = [decoded(item) for item in value]
        items = [item for item in items if isinstance(item, str | dict) and item]
        nodes = [node_from_mapping(item, i, span, key) for i, item in enumerate(items)]
        return [n for n in nodes if n.text.strip()]
    if isinstance(value, dict):
        node = node_from_mapping(value, 0, span, key)
        return [node] if node.text.strip() else []
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return [RetrievedNode(id=i, text=t) for i, t in split_passages(str(value), _SPLIT)]
    return []


def _is_document(value: dict[str, Any]) -> bool:
    """A document, not a wrapper: it has an id or metadata beside its text, or a document key."""
    if value.get("type") == "tool" or "tool_call_id" in value:  # a tool message wrapping the result
        return False
    has_text = any(isinstance(value.get(k), str) for k in ("text", "content"))
    return any(k in value for k in _DOCUMENT_KEYS) or (
        has_text and any(k in value for k in ("id", "id_", "doc_id", "metadata", "score"))
    )
