"""Accounting of judge calls: call records for the collector, prices, usage per case and per metric.

A snapshot diff of a judge's cumulative `usage()` is wrong as soon as two cases overlap, so every
judge call also adds its usage to the accumulators of the current *context*: `evaluate` opens one
scope per case and one per metric, and asyncio copies the context into each task it starts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from evaluators.judges.base import Usage

log = logging.getLogger(__name__)

_scopes: ContextVar[tuple[Usage, ...]] = ContextVar("evaluators_usage_scopes", default=())


@contextmanager
def usage_scope() -> Iterator[Usage]:
    """Collect the usage of every judge call made inside this block (and the tasks it starts)."""
    usage = Usage()
    token = _scopes.set((*_scopes.get(), usage))
    try:
        yield usage
    finally:
        _scopes.reset(token)


def record_usage(usage: Usage) -> None:
    """Called by judges once per call (cached calls included, with zero tokens)."""
    for scope in _scopes.get():
        scope.add(usage)


CallOutcome = Literal[
    "ok",
    "cached",
    "invalid_output",
    "rate_limited",
    "server_error",
    "timeout",
    "connection_error",
    "bad_request",
    "client_error",
]


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    prompt_per_million: float
    completion_per_million: float = 0.0


DEFAULT_PRICES: Mapping[str, Price] = {
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1": Price(2.00, 8.00),
    "text-embedding-3-small": Price(0.02),
    "text-embedding-3-large": Price(0.13),
}


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One HTTP request (or cache hit) to the judge endpoint: what the collector's metrics count."""

    judge: str
    model: str
    operation: str
    outcome: CallOutcome
    latency_s: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    attempt: int = 1


def price_of(prices: Mapping[str, Price], model: str) -> Price | None:
    """Exact model name, else the longest known prefix (dated snapshots like gpt-4o-mini-2024-07-18)."""
    if model in prices:
        return prices[model]
    matches = [name for name in prices if model.startswith(name)]
    return prices[max(matches, key=len)] if matches else None


class CallLedger:
    """One judge's calls, each counted once: its usage into the judge's `total` and the open scopes
    (`record_usage`), its record to the collector's hook. A hook that fails never breaks judging."""

    def __init__(
        self, judge: str, prices: Mapping[str, Price], on_call: Callable[[CallRecord], None] | None
    ) -> None:
        self.judge, self.prices, self.on_call = judge, prices, on_call
        self.total = Usage()

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for the tokens at the model's price; 0.0 for a model without a known price."""
        price = price_of(self.prices, model)
        if price is None:
            return 0.0
        return (
            prompt_tokens * price.prompt_per_million + completion_tokens * price.completion_per_million
        ) / 1e6

    def add(self, record: CallRecord, *, cached: bool = False) -> None:
        billed = (
            record.prompt_tokens or record.completion_tokens or record.outcome in ("ok", "invalid_output")
        )
        usage = Usage(
            calls=1 if billed else 0,
            prompt_tokens=record.prompt_tokens,
            completion_tokens=record.completion_tokens,
            cost_usd=record.cost_usd,
            cached_calls=1 if cached else 0,
        )
        self.total.add(usage)
        record_usage(usage)
        if self.on_call is not None:
            try:
                self.on_call(record)
            except Exception:  # a metrics hook must never break judging
                log.exception("on_call hook failed")
