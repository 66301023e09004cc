"""What every app module returns: one `ask(question)` callable built once, at the app's start-up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Answer:
    passages: list[dict[str, Any]]  # [{id, text, score}] as the framework returned them
    response: str


Ask = Callable[[str], Answer]
