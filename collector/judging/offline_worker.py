"""The code that runs inside the offline judge's worker processes (see `scorers.OfflineJudgePool`).

The fork server imports this module once (`set_forkserver_preload`), which loads the judge and its
embedding model there; every worker is forked from it and shares those pages copy-on-write,
instead of loading a private copy. Each worker then makes its own metric instances and event loop.

A worker is one core's worth of judging (`evaluation.workers` processes give the parallelism), so
the tokenizer runs single-threaded in it: its thread pool would compete with the sibling workers,
and once used before the fork it is disabled in every child with a warning anyway.

Garbage collection was 10-15% of a worker's time. The objects loaded here are frozen out of it
(`gc.freeze`, as its documentation advises before forking): a full collection no longer walks,
and copies page by page, the ~90,000 objects of the code and the model. And a worker allocates
fast (tokens, stems, verdicts) while keeping little: collecting the youngest objects every 20,000
allocations instead of every 700 cut the collector's time from ~1 ms to ~0.3 ms per record.

What a worker then gains is its caches (bounded by entries: docs/offline-judge.md, Memory) and the
shared pages it writes to, which become its own: it levels off after a few thousand records.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from collector.judging.scorers import JudgeOnLoop
from evaluators import CaseResult, JudgeInfo, TestCase
from evaluators.evaluate import FEWER_COLLECTIONS
from evaluators.metrics.custom import CustomMetrics
from evaluators.offline import OfflineJudge

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # read by the tokenizer at each call
JUDGE = OfflineJudge()

# Every built-in metric the sidecar may ask of a record, on one case that gives each its inputs.
_WARM_UP_METRICS = (
    "faithfulness",
    "answer_relevancy",
    "contextual_relevancy",
    "context_utilization",
    "hallucination",
    "contextual_precision",
    "contextual_recall",
    "answer_correctness",
)
_WARM_UP_CASE = TestCase(
    input="When was the tower completed?",
    actual_output="The tower was completed in 1889. It is 330 metres tall. Башня построена в 1889 году.",
    retrieval_context=[
        "The tower was completed in 1889 for the World's Fair.",
        "It is 330 metres tall. Башня была построена в 1889 году.",  # other scripts' tables load too
    ],
    context=["The tower was completed in 1889."],
    expected_output="It was completed in 1889.",
)


def _warm_up() -> None:
    """Judge one case here, before forking, so what loads on first use (the embedding model, the
    sentence splitter, tables read lazily) is loaded once and shared by every worker, not copied
    into each (2-4 MiB a worker, measured). The case's few cache entries are harmless."""
    asyncio.run(JudgeOnLoop(JUDGE).score(_WARM_UP_CASE, _WARM_UP_METRICS))


_warm_up()
gc.freeze()  # everything loaded so far lives as long as the process: no collection need walk it

GC_THRESHOLDS = FEWER_COLLECTIONS  # (20,000, 20, 10), as `evaluate` sets while it runs

_scorer: JudgeOnLoop | None = None
_loop: asyncio.AbstractEventLoop | None = None


def start(options: dict[str, dict[str, Any]], custom: CustomMetrics, sidecar: int | None = None) -> None:
    """Process initializer: this worker's scorer (metrics made with their options), event loop and
    collector thresholds (see above). Ctrl-C reaches the whole process group; the sidecar decides
    when its workers stop, so they ignore it. With the sidecar's pid, the worker also exits when the
    sidecar is gone (`_exit_without`)."""
    global _scorer, _loop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.set_threshold(*GC_THRESHOLDS)
    _scorer, _loop = JudgeOnLoop(JUDGE, options, custom), asyncio.new_event_loop()
    if sidecar is not None:
        threading.Thread(target=_exit_without, args=(sidecar,), name="sidecar-watch", daemon=True).start()


def _exit_without(sidecar: int, every_s: float = 1.0) -> None:
    """Exit once the sidecar process is gone. A sidecar killed outright (SIGKILL, the OOM killer) never
    shuts its pool down, and a worker waiting for its next case never sees it go: the worker holds
    both ends of its task queue's pipe, and the fork server stays up while any worker does. Without
    this, 8 workers and the fork server outlived such a sidecar for good, each with its memory."""
    while True:
        time.sleep(every_s)
        if _gone(sidecar):
            os._exit(0)


def _gone(pid: int) -> bool:
    """Whether process `pid` has exited: there is none (or another user's process took the pid), or it
    is a zombie its parent has not reaped yet, which still answers signal 0 (Linux: its /proc state)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()  # 'pid (name) state ...'; a name may hold ')'
    except OSError:  # no procfs: signal 0 is all there is
        return False
    return stat[stat.rindex(b")") + 2 :].startswith(b"Z")


def info() -> JudgeInfo:
    return JUDGE.info


def score(case: TestCase, names: tuple[str, ...]) -> CaseResult:
    assert _scorer is not None and _loop is not None
    return _loop.run_until_complete(_scorer.score(case, names))
