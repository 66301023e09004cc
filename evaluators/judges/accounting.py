"""Token accounting per case and per metric while cases run concurrently.

A snapshot diff of a judge's cumulative `usage()` is wrong as soon as two cases overlap, so every
judge call also adds its usage to the accumulators of the current *context*: `evaluate` opens one
scope per case and one per metric, and asyncio copies the context into each task it starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from evaluators.judges.base import Usage

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
