"""Suppress re-evaluation of (trace id, metric) pairs seen recently (after a rebalance or restart
re-delivers records that were evaluated but not yet committed)."""

from __future__ import annotations

from collections import OrderedDict


def evaluation_key(trace_id: str, span_id: str, metric: str) -> tuple[str, str]:
    """What one evaluation is about: a metric of one generation (its anchor span), not of a whole trace,
    since an agentic trace holds several generations, each scored by the same metrics."""
    return f"{trace_id}/{span_id}", metric


class RecentKeys:
    """A bounded, time-windowed set: `seen(key, now)` is True when `key` was added within `ttl_s`."""

    def __init__(self, ttl_s: float = 600.0, max_keys: int = 200_000) -> None:
        self.ttl_s, self.max_keys = ttl_s, max_keys
        self._keys: OrderedDict[tuple[str, str], float] = OrderedDict()

    def seen(self, key: tuple[str, str], now: float) -> bool:
        added = self._keys.get(key)
        return added is not None and now - added < self.ttl_s

    def add(self, key: tuple[str, str], now: float) -> None:
        self._keys[key] = now
        self._keys.move_to_end(key)
        while self._keys and (
            len(self._keys) > self.max_keys or now - next(iter(self._keys.values())) >= self.ttl_s
        ):
            self._keys.popitem(last=False)
