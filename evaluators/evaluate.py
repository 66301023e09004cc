"""Run metrics over cases concurrently; every failure becomes a result, never an exception out of here.

`a_evaluate_case` is the unit the collector's pipeline calls for one record; `evaluate` /
`a_evaluate` add bounded concurrency over many cases and the aggregates (means, pass rates,
ragas_score). Cases may be `TestCase`s, mappings, or deepeval / ragas test-case objects (read by
attribute names), and a ragas or deepeval dataset may stand for the list.

While `a_evaluate` runs, Python's cyclic garbage collector runs less often (`fewer_collections`): the
judges' caches keep ~1,000 objects a record alive, which every young collection walks again. With
Python's default thresholds the collector took 20-35% of the offline judge's time per record; with
the sidecar workers' setting (the same one) about 5%.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import gc
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from pydantic import ValidationError

from evaluators import scores
from evaluators.case import MissingFieldError, TestCase, case_input
from evaluators.judges.accounting import usage_scope
from evaluators.judges.base import Judge, Usage
from evaluators.metrics.base import Metric
from evaluators.redaction import redact
from evaluators.result import (
    CaseResult,
    EvaluationResult,
    MetricResult,
    MetricSummary,
    Outcome,
)
from evaluators.session import JudgeSession

log = logging.getLogger("evaluators")

# A TestCase, a mapping under either library's names, or an object with those attributes.
CaseLike = TestCase | Mapping[str, Any] | object
_P = ParamSpec("_P")
_T = TypeVar("_T")


async def a_evaluate_case(
    case: CaseLike, metrics: Sequence[Metric], judge: Judge, *, case_id: str | None = None
) -> CaseResult:
    """All metrics of one case, concurrently, sharing one `JudgeSession` (claims extracted once)."""
    started = time.monotonic()
    case = case_input(case)
    try:
        test_case = case if isinstance(case, TestCase) else TestCase.model_validate(case)
    except ValidationError as error:
        reason = f"invalid test case: {error.error_count()} problem(s): {error.errors()[0]['msg']}"
        return CaseResult(
            case_id=case_id or "?", results=[m.outcome_result(Outcome.ERROR, reason) for m in metrics]
        )
    _check_unique_names(metrics)
    session = JudgeSession(judge)
    with usage_scope() as usage:
        results = await asyncio.gather(*(_measure(metric, test_case, session) for metric in metrics))
    return CaseResult(
        case_id=case_id or test_case.id or "?",
        results=list(results),
        usage=usage.copy(),
        duration_s=time.monotonic() - started,
    )


async def _measure(metric: Metric, case: TestCase, session: JudgeSession) -> MetricResult:
    try:
        return await metric.a_measure(case, session=session)
    except MissingFieldError as error:
        return metric.outcome_result(Outcome.UNMEASURED, str(error))
    except Exception as error:  # a bug or a misbehaving judge must not take the batch down
        log.exception("metric %s failed unexpectedly", metric.name)
        return metric.outcome_result(Outcome.ERROR, redact(f"{type(error).__name__}: {error}"))


async def a_evaluate(
    cases: Iterable[CaseLike],
    metrics: Sequence[Metric],
    judge: Judge,
    *,
    concurrency: int = 8,
    on_case: Callable[[CaseResult], None] | None = None,
) -> EvaluationResult:
    """Evaluate many cases with at most `concurrency` in flight; results keep the input order."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    _check_unique_names(metrics)
    gate = asyncio.Semaphore(concurrency)
    inputs = [case_input(case) for case in _cases_of(cases)]

    async def one(index: int, case: TestCase | Mapping[str, Any]) -> CaseResult:
        async with gate:
            result = await a_evaluate_case(case, metrics, judge, case_id=_case_id(case, index))
        if on_case is not None:
            on_case(result)
        return result

    with usage_scope() as usage, fewer_collections():
        case_results = await asyncio.gather(*(one(i, case) for i, case in enumerate(inputs)))
    summaries = summarize(case_results, metrics)
    return EvaluationResult(
        cases=list(case_results),
        metrics=summaries,
        ragas_score=ragas_score(summaries),
        usage=usage.copy(),
        judge={"judge": judge.info.judge, "model": judge.info.model},
    )


def _synchronous(
    coroutine_function: Callable[_P, Coroutine[Any, Any, _T]], name: str, doc: str
) -> Callable[_P, _T]:
    """`coroutine_function` run to completion for a caller without `await`, under the same parameters (the
    twin's signature is the coroutine function's, never restated). Inside a running event loop (a
    notebook) it runs on a thread of its own with its own loop, since the caller's loop cannot be
    re-entered."""

    @functools.wraps(coroutine_function)
    def synchronous(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        def run() -> _T:
            # The result leaves by `done`, not as the main task's result: on the main thread, asyncio.run
            # restores Ctrl-C's handler through `signal.getsignal`, which formats the handler (it holds
            # the main task) into an error message it then discards, so a task result would be repr'd
            # whole: every case's results, ~0.9 ms a case, 18% of the offline judge's time.
            done: list[_T] = []

            async def main() -> None:
                done.append(await coroutine_function(*args, **kwargs))

            asyncio.run(main())
            return done[0]

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run()
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"ragpulse-{name}") as pool:
            return pool.submit(run).result()

    synchronous.__name__ = synchronous.__qualname__ = name
    synchronous.__doc__ = doc
    return synchronous


evaluate = _synchronous(
    a_evaluate,
    "evaluate",
    """Synchronous `a_evaluate` for scripts and CI. Inside a running event loop (a notebook) the
    evaluation runs on a thread of its own with its own loop, since the caller's loop cannot be
    re-entered.""",
)


# The youngest objects are collected every 20,000 net allocations instead of every 700 (Python's default
# thresholds are (700, 10, 10)): judging allocates fast (tokens, stems, verdicts) and keeps little but
# cache entries.
FEWER_COLLECTIONS = (20_000, 20, 10)
_collections_lock = threading.Lock()
_tuning: list[tuple[int, ...]] = []  # while evaluations run: (thresholds before the first, ours)
_evaluations = 0


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The collector's thresholds at least `FEWER_COLLECTIONS` while any evaluation runs (threads and
    nested loops may overlap them), put back when the last one ends unless someone changed them
    meanwhile. Only when and how often unreachable cycles are freed changes, never what is freed;
    a threshold of 0 (automatic collection off) or a higher one is kept."""
    global _evaluations
    with _collections_lock:
        if _evaluations == 0:
            before: tuple[int, ...] = gc.get_threshold()
            ours = before if before[0] == 0 else tuple(map(max, before, FEWER_COLLECTIONS))
            gc.set_threshold(*ours)
            _tuning[:] = [before, ours]
        _evaluations += 1
    try:
        yield
    finally:
        with _collections_lock:
            _evaluations -= 1
            if _evaluations == 0:
                before, ours = _tuning
                if gc.get_threshold() == ours:
                    gc.set_threshold(*before)


def summarize(cases: Sequence[CaseResult], metrics: Sequence[Metric]) -> list[MetricSummary]:
    summaries = []
    for metric in metrics:
        results = [r for case in cases for r in case.results if r.name == metric.name]
        measured = [r.score for r in results if r.score is not None]
        counts = Counter(r.outcome for r in results)
        judged = counts[Outcome.PASSED] + counts[Outcome.FAILED] + counts[Outcome.ERROR]
        usage = Usage()
        for r in results:
            usage.add(r.usage)
        summaries.append(
            MetricSummary(
                name=metric.name,
                lower_is_better=metric.lower_is_better,
                mean=scores.mean(measured) if measured else None,
                pass_rate=counts[Outcome.PASSED] / judged if judged else None,
                counts={outcome: counts[outcome] for outcome in Outcome},
                usage=usage,
            )
        )
    return summaries


def ragas_score(summaries: Sequence[MetricSummary]) -> float | None:
    """Harmonic mean of metric means, lower-is-better ones as 1 - mean, each clipped into [0, 1]."""
    values = [
        min(1.0, max(0.0, 1.0 - s.mean if s.lower_is_better else s.mean))
        for s in summaries
        if s.mean is not None
    ]
    return scores.harmonic_mean(values) if values else None


def _cases_of(cases: Iterable[CaseLike]) -> Iterable[CaseLike]:
    """The cases of a ragas `EvaluationDataset` (`samples`) or a deepeval dataset (`test_cases`)."""
    if not isinstance(cases, list | tuple):
        for attribute in ("samples", "test_cases"):
            inner = getattr(cases, attribute, None)
            if isinstance(inner, list | tuple):
                return inner
    return cases


def _case_id(case: TestCase | Mapping[str, Any], index: int) -> str:
    explicit = case.id if isinstance(case, TestCase) else case.get("id")
    return str(explicit) if explicit is not None else str(index)


def _check_unique_names(metrics: Sequence[Metric]) -> None:
    names = [m.name for m in metrics]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two metrics share the name(s) {duplicates}; give them distinct names")
