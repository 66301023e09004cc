"""Receivers (sources): where spans come from. Each hands `Received` batches to the pipeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from collector.assemble import Ack
from collector.spans import LogEvent, Span


@dataclass(slots=True)
class Received:
    """Spans (or log events) decoded from one Kafka record or one OTLP request, and one hold on it.

    The hold passes to the pipeline with the spans; it releases it once they are buffered (by
    then each trace they joined holds the record too).
    """

    spans: list[Span]
    ack: Ack
    source: str  # "kafka", "otlp" (HTTP) or "otlp_grpc"
    logs: list[LogEvent] = field(default_factory=list)


Deliver = Callable[[Received], None]


class Receiver(Protocol):
    name: str

    def start(self, deliver: Deliver) -> None:
        """Begin delivering batches (from a background thread); returns at once."""
        ...

    def stop(self) -> None:
        """Stop taking new input; what was delivered is still acknowledged."""
        ...

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Stop, commit what is done, release resources."""
        ...

    @property
    def ready(self) -> bool:
        """Connected and receiving (for /readyz)."""
        ...
