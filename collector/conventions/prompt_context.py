"""Context read from the prompt, for apps that retrieve without a retriever span.

Many apps call the LLM SDK directly: they search their own store and paste the passages into the
system message (or into the user message around the question). Their traces hold one LLM span and
nothing else; the passages are whatever text of the prompt is not the question and not the
instructions. The rules, each configurable under `extraction.prompt_context`:

- context comes from messages with the configured roles (default: system), or, when those are
  empty, from the user message's text before a question marker ("Question:", "Query:");
- it is split into passages at separator lines (`---`, `===`), blank lines and numbered markers
  (`[1]`, `Document 2:`, `Source 3:`);
- a LlamaIndex-style metadata header (`file_path: ...` lines before a blank line) is not passage
  text, and neither is a short paragraph of instructions ("Answer using only the context below"), nor
  a header that labels the passages (`Context:`, `Documents:`, `Sources:` alone on its line or
  before the first passage's text);
- a prompt in DSPy's field template (`markup`) is read by its fields: the context field's items are
  the passages and the question field the question, whatever the roles.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from collector.conventions.markup import template_context
from collector.records import RetrievedNode

_SEPARATOR = re.compile(r"^\s*(?:-{3,}|={3,}|\*{3,}|#{1,3}\s.*)\s*$")
# `[1]`, `[kb-3]`, `(2)`, `Document 4:`, `Source 5 -`; the marker doubles as the passage id.
_NUMBERED = re.compile(
    r"^\s*(?:\[(?P<id>[^\]\s]{1,40})\]|\((?P<paren>\d+)\)"
    r"|(?:document|doc|source|passage|context)\s*(?P<n>\d+)\s*[:.)-])",
    re.I,
)
# A header labelling the passages that follow: `Context:`, `Retrieved documents:`, `## Sources:`.
_HEADER = re.compile(
    r"^\s*(?:#{1,3}\s*)?(?:(?:(?:retrieved|relevant|supporting)\s+)?"
    r"(?:context|contexts|documents?|sources?|passages?)|search results)\s*:\s*",
    re.I,
)
_METADATA_LINE = re.compile(r"^[a-z_][a-z0-9_.]{0,40}:\s?\S[^\n]{0,200}$")  # file_path: /docs/a.txt
_INSTRUCTIONS = (
    re.compile(  # "Answer using only the context below", "Given the context information, answer"
        r"(?i)\b(answer|respond|reply|use|using|based on|given|according to|only)\b.{0,120}"
        r"\b(context|information|documents?|passages?|sources?|below|above|following)\b"
    ),
    re.compile(
        r"(?i)\b(context|information|documents?|passages?|sources?)\b.{0,40}\b(below|above|following)\b"
    ),
    re.compile(r"(?i)^\s*(you are|you're|act as|as an? \w+ assistant)\b"),  # a persona, not knowledge
)


@dataclass(slots=True)
class Message:
    """One message of a prompt or a reply, as the conventions read it."""

    role: str  # system, user, assistant, tool
    text: str
    images: list[str] = field(default_factory=list)  # image URLs / data URIs of its image parts


class PromptContextConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(
        True, description="Read context from the prompt when a trace has no retriever span."
    )
    roles: list[str] = Field(
        default_factory=lambda: ["system"], description="Message roles whose text is context."
    )
    question_markers: list[str] = Field(
        default_factory=lambda: ["Question:", "Query:", "User question:", "Q:"],
        description="In a user message holding context and question, the question follows the last marker.",
    )
    max_instruction_chars: int = Field(
        400, ge=0, description="A paragraph this short that reads as instructions is not a passage."
    )


PromptContext = PromptContextConfig


def context_from_prompt(
    messages: Sequence[Message], question: str | None, config: PromptContextConfig
) -> tuple[str, list[RetrievedNode]] | None:
    """(question, passages) from a generation's messages, or None when the prompt holds no context."""
    if not config.enabled:
        return None
    users = [m.text for m in messages if m.role == "user" and m.text.strip()]
    templated = template_context(users[-1]) if users else None
    if templated is not None:  # DSPy: the fields, not the template
        asked, items = templated
        question = question or asked
        return (question, [RetrievedNode(id=i, text=t) for i, t in items]) if question else None
    context = "\n\n".join(m.text for m in messages if m.role in config.roles and m.text.strip())
    if users and not context:
        context, asked = _split_question(users[-1], config.question_markers)
        question = question or asked
    elif users:
        question = question or users[-1].strip()
    if not question or not context:
        return None
    passages = split_passages(context, config)
    if not passages:
        return None
    return question, [RetrievedNode(id=node_id, text=text) for node_id, text in passages]


def _split_question(text: str, markers: Sequence[str]) -> tuple[str, str | None]:
    """(context, question) of one user message; no marker means no context in it."""
    lowered = text.lower()
    positions = [(lowered.rfind(m.lower()), m) for m in markers]
    position, marker = max(positions, key=lambda p: p[0])
    if position <= 0:
        return "", None
    question = text[position + len(marker) :].strip().split("\n")[0].strip()
    return text[:position], question or None


def split_passages(context: str, config: PromptContextConfig) -> list[tuple[str, str]]:
    """(id, text) per passage; the id is the passage's own marker (`[kb-3]`, `Document 2:`) or its rank."""
    blocks: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in context.splitlines():
        header = _HEADER.match(line)
        if header and not blocks[-1][1]:  # `Context:` before a passage labels it, is not its text
            line = line[header.end() :]
        elif header and not line[header.end() :].strip():
            line = ""
        marker = _NUMBERED.match(line)
        if _SEPARATOR.match(line) or not line.strip():
            blocks.append((None, []))
        elif marker:
            if blocks[-1][1]:
                blocks.append((None, []))
            blocks[-1] = (
                marker.group("id") or marker.group("paren") or marker.group("n"),
                [line[marker.end() :].strip()],
            )
        else:
            blocks[-1][1].append(line.strip())
    passages: list[tuple[str, str]] = []
    for marker_id, lines in blocks:
        text = " ".join(line for line in lines if line).strip()
        if not text or _is_metadata(lines) or (marker_id is None and _is_instruction(text, config)):
            continue
        passages.append((marker_id or str(len(passages)), text))
    return passages


def _is_metadata(lines: list[str]) -> bool:
    """A block made only of `snake_case_key: value` lines (LlamaIndex puts node metadata above the text)."""
    present = [line for line in lines if line.strip()]
    return bool(present) and all(_METADATA_LINE.match(line) for line in present)


def _is_instruction(text: str, config: PromptContextConfig) -> bool:
    return len(text) <= config.max_instruction_chars and (
        any(pattern.search(text) for pattern in _INSTRUCTIONS) or text.rstrip().endswith(":")
    )
