"""Suppress re-evaluation of an answer's metrics seen recently (after a rebalance or restart re-delivers
records that were evaluated but not yet committed)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from collector.stages import SharedTuples

Answer = tuple[str, str]  # (trace id, anchor span id): one generation of a trace


def evaluation_key(trace_id: str, span_id: str, metric: str) -> tuple[Answer, str]:
    """What one evaluation is about: a metric of one generation (its anchor span), not of a whole trace,
    since an agentic trace holds several generations, each scored by the same metrics."""
    return (trace_id, span_id), metric


class RecentEvaluations:
    """A bounded, time-windowed set of (answer, metric) pairs: `seen` is True when the pair was added
    within `ttl_s`. One entry per answer holds all its metrics (a record's metrics are evaluated
    together), so remembering an answer of five metrics costs about 330 bytes, ids included, against
    1.6 KB as a key per metric (`benchmarks/answer_memory.py`): at 100 records a second the default
    600 s window holds 60,000 answers, 19 MiB."""

    def __init__(self, ttl_s: float = 600.0, max_answers: int = 200_000) -> None:
        self.ttl_s, self.max_answers = ttl_s, max_answers
        self._answers: OrderedDict[Answer, tuple[float, tuple[str, ...]]] = OrderedDict()  # oldest first
        self._shared = SharedTuples()

    def seen(self, answer: Answer, metric: str, now: float) -> bool:
        entry = self._answers.get(answer)
        return entry is not None and now - entry[0] < self.ttl_s and metric in entry[1]

    def add(self, answer: Answer, metrics: Iterable[str], now: float) -> None:
        """Remember `metrics` of `answer` as evaluated at `now` (with those remembered before, if any)."""
        entry = self._answers.pop(answer, None)
        known = entry[1] if entry is not None and now - entry[0] < self.ttl_s else ()
        combined = tuple(sorted({*known, *metrics}))
        self._answers[answer] = (now, self._shared(combined))
        while self._answers and (
            len(self._answers) > self.max_answers or now - next(iter(self._answers.values()))[0] >= self.ttl_s
        ):
            self._answers.popitem(last=False)

    def __len__(self) -> int:
        return len(self._answers)
