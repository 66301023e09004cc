"""Where a test case is scored: on the event loop (an LLM judge waits on HTTP), or in worker
processes (the offline judge is CPU-bound numpy work: on the loop it would serialise every
evaluation and stall ingest, and threads would share one GIL).

Both turn `(case, metric names)` into the evaluators' `CaseResult`; metric instances are made
once per name from the configured options.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from evaluators import (
    CaseResult,
    Judge,
    JudgeInfo,
    Metric,
    MetricResult,
    Outcome,
    TestCase,
    a_evaluate_case,
    create_metric,
)
from evaluators.metrics.custom import CustomMetrics

logger = logging.getLogger(__name__)

OptionsByMetric = Mapping[str, Mapping[str, Any]]


class CaseScorer(Protocol):
    info: JudgeInfo

    async def score(self, case: TestCase, metrics: Sequence[str]) -> CaseResult: ...

    def errors(self, metrics: Sequence[str], reason: str) -> list[MetricResult]:
        """`error` results for `metrics` that this judge could not score (threshold and direction kept)."""
        ...

    def shutdown(self) -> None: ...


class _Metrics:
    """Metric instances by name (built-in or the configured custom criteria), made on first use with
    their configured options."""

    def __init__(self, options: OptionsByMetric, custom: CustomMetrics | None = None) -> None:
        self._options = options
        self._custom = custom or {}
        self._made: dict[str, Metric] = {}

    def __call__(self, names: Sequence[str]) -> list[Metric]:
        for name in names:
            if name not in self._made:
                self._made[name] = create_metric(name, custom=self._custom, **self._options.get(name, {}))
        return [self._made[name] for name in names]


class JudgeOnLoop:
    """Scores on the caller's event loop: for the LLM judge (I/O-bound, concurrent by `await`)."""

    def __init__(
        self, judge: Judge, options: OptionsByMetric | None = None, custom: CustomMetrics | None = None
    ) -> None:
        self.judge, self.info = judge, judge.info
        self._metrics = _Metrics(options or {}, custom)

    async def score(self, case: TestCase, metrics: Sequence[str]) -> CaseResult:
        return await a_evaluate_case(case, self._metrics(metrics), self.judge, case_id=case.id)

    def errors(self, metrics: Sequence[str], reason: str) -> list[MetricResult]:
        return [m.outcome_result(Outcome.ERROR, reason) for m in self._metrics(metrics)]

    def shutdown(self) -> None:
        pass


# --- the offline judge in worker processes -----------------------------------------------------------
_WORKER_MODULE = "collector.judging.offline_worker"  # by name: importing it loads the model


def _in_worker(function: str, *args: Any) -> Any:
    """Call `function` of the worker module, inside a worker process."""
    return getattr(importlib.import_module(_WORKER_MODULE), function)(*args)


class OfflineJudgePool:
    """The offline judge in `processes` worker processes, so `evaluation.workers` means parallelism.

    Processes are forked from a fork server (never from this multi-threaded process) that loaded
    the judge once (`offline_worker`), so they share its model; they are up before `__init__`
    returns: ready means ready to judge. A worker that dies (killed, out of memory) breaks the
    pool: the cases in flight are scored `error` and a new pool is started.
    """

    def __init__(
        self, processes: int, options: OptionsByMetric | None = None, custom: CustomMetrics | None = None
    ) -> None:
        self.processes = processes
        self._options = {name: dict(values) for name, values in (options or {}).items()}
        self._custom = dict(custom or {})
        self._metrics = _Metrics(self._options, self._custom)  # only to describe a case lost with its worker
        self._executor = self._start()
        futures = [self._executor.submit(_in_worker, "info") for _ in range(processes)]
        self.info: JudgeInfo = futures[0].result()
        for future in futures[1:]:
            future.result()

    def _start(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([_WORKER_MODULE])  # the judge, loaded once for all workers
        return ProcessPoolExecutor(
            self.processes,
            mp_context=context,
            initializer=_in_worker,
            initargs=("start", self._options, self._custom, os.getpid()),
        )

    async def score(self, case: TestCase, metrics: Sequence[str]) -> CaseResult:
        loop = asyncio.get_running_loop()
        executor = self._executor
        try:
            return await loop.run_in_executor(executor, _in_worker, "score", case, tuple(metrics))
        except BrokenProcessPool:
            if executor is self._executor:
                logger.error("an offline judge worker process died; starting new ones")
                self._executor = self._start()
            reason = "the offline judge's worker process died while scoring this case"
            return CaseResult(case_id=case.id or "", results=self.errors(metrics, reason))

    def errors(self, metrics: Sequence[str], reason: str) -> list[MetricResult]:
        return [m.outcome_result(Outcome.ERROR, reason) for m in self._metrics(metrics)]

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
