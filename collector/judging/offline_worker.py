"""The code that runs inside the offline judge's worker processes (see `scorers.OfflineJudgePool`).

The fork server imports this module once (`set_forkserver_preload`), which loads the judge and its
embedding model there; every worker is forked from it and shares those pages copy-on-write,
instead of loading a private copy. Each worker then makes its own metric instances and event loop.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from collector.judging.scorers import JudgeOnLoop
from evaluators import CaseResult, JudgeInfo, TestCase
from evaluators.metrics.custom import CustomMetrics
from evaluators.offline import OfflineJudge

JUDGE = OfflineJudge()
JUDGE.embedder.embed(["warm-up"])  # the embedding model loads lazily: load it before forking

_scorer: JudgeOnLoop | None = None
_loop: asyncio.AbstractEventLoop | None = None


def start(options: dict[str, dict[str, Any]], custom: CustomMetrics) -> None:
    """Process initializer: this worker's scorer (metrics made with their options) and event loop.
    Ctrl-C reaches the whole process group; the sidecar decides when its workers stop, so they
    ignore it."""
    global _scorer, _loop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _scorer, _loop = JudgeOnLoop(JUDGE, options, custom), asyncio.new_event_loop()


def info() -> JudgeInfo:
    return JUDGE.info


def score(case: TestCase, names: tuple[str, ...]) -> CaseResult:
    assert _scorer is not None and _loop is not None
    return _loop.run_until_complete(_scorer.score(case, names))
