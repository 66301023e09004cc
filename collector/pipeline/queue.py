"""What waits for the judge, what is shed, and when a record the judge failed comes back.

Records from the OTLP receivers exist nowhere else once answered, so past `queue_size` waiting they
are shed (counted, acknowledged). Kafka records are never shed: they wait uncommitted, and the
consumer pauses at `kafka.max_in_flight_records`, so a flood becomes lag, not loss. A record the
judge could not score comes back after a backoff, never shed, until `judge_retry_for_s` is over.
`EvaluationConfig` (the config file's `evaluation:` section) sets these bounds and the stage's workers.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from collector.assembly.assembler import AssembledTrace
from collector.metrics import DROPPED, QUEUE_DEPTH
from collector.records import RagRecord
from collector.sampling.sampler import Decision

_MAX_RETRY_DELAY_S = 30.0


class EvaluationConfig(BaseModel):
    """The evaluate stage: its queue, its concurrency, duplicate suppression and the drain."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    queue_size: int = Field(
        1000,
        ge=1,
        description="Records from the OTLP receivers waiting for evaluation; beyond it they are shed "
        "(counted). Kafka records are never shed: they wait, and kafka.max_in_flight_records pauses "
        "the consumer (the lag grows, nothing is committed unscored).",
    )
    workers: int = Field(
        8, ge=1, description="Records evaluated concurrently (the offline judge: up to one process per core)."
    )
    dedup_window_s: float = Field(600.0, ge=0, description="Suppress (trace, metric) re-evaluations.")
    shutdown_deadline_s: float = Field(20.0, ge=0, description="Finish in-flight work within this.")
    tick_s: float = Field(0.1, gt=0, description="How often complete traces are collected.")
    flush_interval_s: float = Field(0.5, gt=0, description="Exporters flush, then offsets may advance.")
    judge_retry_for_s: float = Field(
        600.0,
        ge=0,
        description="A record the judge could not score (every metric `error`, or its circuit open) is "
        "evaluated again, with backoff, for this long; then it is exported with outcome error and the "
        "reason 'judge unavailable for N min'. 0 = never retry.",
    )
    judge_retry_backoff_s: float = Field(
        5.0, gt=0, description="First retry delay; doubles with each failed judge call, up to 30 s."
    )
    flush_timeout_s: float = Field(
        10.0, gt=0, description="Longest wait for one exporter's flush; unconfirmed, the offsets wait."
    )


class TraceHold:
    """A trace's acknowledgement shared by the records extracted from it: released with the last."""

    __slots__ = ("_remaining", "_trace")

    def __init__(self, trace: AssembledTrace, records: int) -> None:
        self._trace, self._remaining = trace, records

    @property
    def replayable(self) -> bool:
        return self._trace.replayable

    def release(self) -> None:
        self._remaining -= 1
        if self._remaining == 0:
            self._trace.release()


class NoHold:
    """The hold of a job with nothing to acknowledge: a conversation, whose turns were acknowledged as
    their own records were judged. Shed under overload like an OTLP record (it is not read again)."""

    __slots__ = ()
    replayable = False

    def release(self) -> None:
        return None


@dataclass(slots=True)
class Job:
    record: RagRecord
    decision: Decision
    hold: TraceHold | NoHold
    attempts: int = 0  # judge calls that failed so far (they double the backoff)
    first_failure: float = 0.0  # monotonic time the judge first failed it (the retry window's start)


class EvaluationQueue:
    def __init__(self, max_sheddable: int, retry_for_s: float, retry_backoff_s: float) -> None:
        self.max_sheddable, self.retry_for_s, self.retry_backoff_s = (
            max_sheddable,
            retry_for_s,
            retry_backoff_s,
        )
        # Unbounded as a Queue: `put` bounds what may be shed, the in-flight cap bounds the rest.
        self._queue: asyncio.Queue[Job] = asyncio.Queue()

    def put(self, job: Job) -> None:
        """Queue `job`, or shed it (counted, acknowledged) when it is an OTLP record arriving while
        `max_sheddable` records wait already."""
        retry = job.first_failure > 0  # accepted already: shedding it would drop what the judge owes it
        if self._queue.qsize() >= self.max_sheddable and not job.hold.replayable and not retry:
            DROPPED.labels("overload").inc()
            job.decision.release()  # never judged: its judge budget reservation goes back
            job.hold.release()
        else:
            self._queue.put_nowait(job)
        QUEUE_DEPTH.set(self._queue.qsize())

    def retry_later(self, job: Job, judge_called: bool) -> bool:
        """Queue `job` again after a backoff, keeping its hold, unless it has been retried for
        `retry_for_s` already (False: the caller exports it as it is). A shutdown meanwhile leaves it
        unacknowledged: it is read again later.

        Only calls that reached the judge double the backoff: a record skipped by the open circuit
        comes back at the first delay, so it is scored soon after the judge recovers instead of
        sleeping out a backoff grown while nothing was even tried."""
        now = time.monotonic()
        job.first_failure = job.first_failure or now
        if now - job.first_failure >= self.retry_for_s:
            return False
        delay = min(self.retry_backoff_s * 2**job.attempts, _MAX_RETRY_DELAY_S)
        job.attempts += judge_called
        asyncio.get_running_loop().call_later(delay, self.put, job)
        return True

    async def get(self) -> Job:
        job = await self._queue.get()
        QUEUE_DEPTH.set(self._queue.qsize())
        return job

    def task_done(self) -> None:
        self._queue.task_done()

    async def join(self) -> None:
        await self._queue.join()

    def qsize(self) -> int:
        return self._queue.qsize()
