"""Checks for the HTTP endpoints a user configures (forwarding, Phoenix, evaluation spans): a mistake is
caught by `check-config` at start, not found out as a failure on every request."""

from __future__ import annotations

from pydantic import SecretStr, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError


def base_url(value: str | None, appended: tuple[str, ...], hint: str) -> str | None:
    """An http(s) base URL without a trailing slash (None when unset); it must not already end with one
    of the `appended` paths ragpulse adds to it (`hint` says which)."""
    if not value:
        return None
    value = value.rstrip("/")
    if not value.startswith(("http://", "https://")):
        raise ValueError("give an http:// or https:// URL")
    if value.endswith(appended):
        raise ValueError(hint)
    return value


def sendable_headers(headers: dict[str, SecretStr]) -> dict[str, SecretStr]:
    """HTTP headers are ASCII lines: anything else would fail every request of the sending thread.
    Raised as a ValidationError with the input masked: a ValueError's would print the secret."""
    for name, value in headers.items():
        text = name + value.get_secret_value()
        if not text.isascii() or "\r" in text or "\n" in text:
            error = PydanticCustomError("header", "ASCII without line breaks")
            line = InitErrorDetails(type=error, loc=(name,), input="**********")
            raise ValidationError.from_exception_data("headers", [line])
    return headers
