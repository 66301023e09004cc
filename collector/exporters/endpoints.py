"""The HTTP endpoints a user configures (forwarding, Phoenix, evaluation spans): what they share, and the
checks that catch a mistake in `check-config` at start rather than as a failure on every request.
`HeldResults` adds what the endpoints that are sent evaluation results share: the results wait, held
(`collector.exporters.held`), until the endpoint accepts them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
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


class HttpDestination(BaseModel):
    """What every configured HTTP endpoint carries besides its URL: headers that may hold secrets
    (checked sendable at start, never logged) and a per-request timeout."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    headers: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Sent with every request (e.g. {Authorization: 'Bearer <token>'}); never logged.",
    )
    timeout_s: float = Field(10.0, gt=0, description="Per request attempt.")

    _sendable = field_validator("headers")(sendable_headers)

    def revealed_headers(self) -> dict[str, str]:
        """The headers as they go on the wire (the only place their secrets are read)."""
        return {name: value.get_secret_value() for name, value in self.headers.items()}


class HeldResults(HttpDestination):
    """An endpoint that is sent evaluation results, each held until the endpoint accepted it: how many may
    wait, how long failures are sent again, and how much of a judge's reason goes along. (A destination
    names its own batch size: the settings users have today are `max_batch_size` for Phoenix and the
    OpenTelemetry SDK's `max_export_batch_size` for the evaluation spans.)"""

    max_explanation_chars: int = Field(1000, ge=0, description="Longer judge reasons are truncated.")
    max_queue_size: int = Field(
        20_000,
        ge=1,
        description="Results held until the endpoint accepts them. Nine tenths full, evaluation waits for "
        "the endpoint (Kafka records wait uncommitted); results that still do not fit are dropped and "
        "counted.",
    )
    retry_for_s: float = Field(
        300.0,
        ge=0,
        description="How long held results are sent again while the endpoint fails, before they are given "
        "up and counted (offsets wait meanwhile, so a restart does not lose them).",
    )
