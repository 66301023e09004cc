"""Receivers (sources): where spans come from. Each hands `Received` batches to the pipeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from collector.assemble import Ack
from collector.spans import Span


@dataclass(slots=True)
class Received:
    """Spans decoded from one Kafka record or one OTLP request, and one hold on that record.

    The hold passes to the pipeline with the spans; it releases it once they are buffered (by
    then each trace they joined holds the record too).
    """

    spans: list[Span]
    ack: Ack
    source: str  # "kafka" or "otlp"


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
