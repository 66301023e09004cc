"""A bounded LRU of judge replies keyed by the content hash of the request.

Replays, retries of a whole batch and repeated cases send byte-identical requests; answering them
from memory saves the call. Bounded so a long-running sidecar cannot grow without limit.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_FRESH: ContextVar[bool] = ContextVar("ragpulse_fresh_replies", default=False)


@contextmanager
def fresh_replies() -> Iterator[None]:
    """Inside, replies are never read from the cache (still stored): a judge canary must ask the judge
    again, or a provider changing the model behind the same name would stay invisible."""
    token = _FRESH.set(True)
    try:
        yield
    finally:
        _FRESH.reset(token)


def request_key(payload: Any) -> str:
    return hashlib.sha256(
        json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode()
    ).hexdigest()


class ReplyCache:
    def __init__(self, max_entries: int = 2048) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, Any] = OrderedDict()

    def get(self, key: str) -> Any | None:
        if _FRESH.get() or key not in self._entries:
            return None
        self._entries.move_to_end(key)
        return self._entries[key]

    def put(self, key: str, value: Any) -> None:
        if self.max_entries <= 0:
            return
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
