"""The code that runs inside the offline judge's worker processes (see `scorers.OfflineJudgePool`).

The fork server imports this module once (`set_forkserver_preload`), which loads the judge and its
embedding model there; every worker is forked from it and shares those pages copy-on-write,
instead of loading a private copy. Each worker then makes its own metric instances and event loop.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from evaluators import CaseResult, JudgeInfo, TestCase, a_evaluate_case, create_metric
from evaluators.offline import OfflineJudge

JUDGE = OfflineJudge()
JUDGE.embedder.embed(["warm-up"])  # the embedding model loads lazily: load it before forking

_options: dict[str, dict[str, Any]] = {}
_metrics: dict[str, Any] = {}
_loop: asyncio.AbstractEventLoop | None = None


def start(options: dict[str, dict[str, Any]]) -> None:
    """Process initializer: this worker's metric options and event loop. Ctrl-C reaches the whole
    process group; the sidecar decides when its workers stop, so they ignore it."""
    global _options, _loop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _options, _loop = options, asyncio.new_event_loop()


def info() -> JudgeInfo:
    return JUDGE.info


def score(case: TestCase, names: tuple[str, ...]) -> CaseResult:
    assert _loop is not None
    for name in names:
        if name not in _metrics:
            _metrics[name] = create_metric(name, **_options.get(name, {}))
    metrics = [_metrics[name] for name in names]
    return _loop.run_until_complete(a_evaluate_case(case, metrics, JUDGE, case_id=case.id))
