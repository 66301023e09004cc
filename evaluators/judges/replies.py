"""What goes into and comes out of one judge chat request: user content, validated replies, log-probs.

`ChatTransport` (transport.py) does the HTTP, retries and accounting; these are the values it passes
around, kept apart so that the retry logic reads in one screen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from evaluators.judges.base import JudgeError

M = TypeVar("M", bound=BaseModel)


class InvalidReplyError(JudgeError):
    """The reply still failed validation after the repair turn. `value`: the reply, when it parsed
    (it failed the caller's check), so the caller can say what was wrong with it."""

    def __init__(self, message: str, value: BaseModel | None) -> None:
        super().__init__(message)
        self.value = value


# A user message's content: text, or OpenAI content parts ({"type": "text", "text": ...},
# {"type": "image_url", "image_url": {"url": ...}}) when images go along.
UserContent = str | list[dict[str, Any]]


def has_images(user: UserContent) -> bool:
    return not isinstance(user, str) and any(part.get("type") == "image_url" for part in user)


TokenLogprobs = tuple[
    tuple[str, tuple[tuple[str, float], ...]], ...
]  # (token, ((alternative, logprob), ...))


@dataclass(frozen=True, slots=True)
class StructuredReply:
    value: Any
    content: str
    logprobs: TokenLogprobs | None = None


@dataclass(frozen=True, slots=True)
class TimedResponse:
    """An endpoint's response with how long it took and on which attempt (for the call record)."""

    response: Any
    latency_s: float
    attempt: int

    @property
    def content(self) -> str:
        choices = getattr(self.response, "choices", None) or []
        return (choices[0].message.content or "") if choices else ""


def validate_reply(
    content: str, reply_model: type[M], check: Callable[[M], str | None] | None
) -> tuple[M | None, str | None]:
    """(value, what is wrong or None): the value is None when the reply does not parse; one that parses
    but fails `check` comes with the problem, for the repair turn and for a caller that can use it."""
    try:
        value = reply_model.model_validate_json(content)
    except ValidationError as error:
        return None, short_error(error)
    return value, check(value) if check else None


def token_logprobs(response: Any) -> TokenLogprobs | None:
    """The reply's tokens with their top alternatives, when the endpoint sent log-probs."""
    choices = getattr(response, "choices", None) or []
    choice_logprobs = getattr(choices[0], "logprobs", None) if choices else None
    content = getattr(choice_logprobs, "content", None) if choice_logprobs else None
    if not content:
        return None
    return tuple(
        (token.token, tuple((alt.token, alt.logprob) for alt in (token.top_logprobs or ())))
        for token in content
    )


def short_error(error: Exception | str, limit: int = 300) -> str:
    """An error on one line, cut to `limit` characters: what a verdict's reason or a log line shows."""
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
