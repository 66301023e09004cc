"""The pipeline: receive -> assemble -> sample -> extract -> sample -> queue -> evaluate -> export -> ack.

Sampling comes in two steps: on the trace id before extraction (`Sampler.drops_early`: a trace no record of
which can be sampled is released unread), then per extracted record (`Sampler.decide`).

All stage state lives on one asyncio loop, and nothing on it blocks: receivers run in their own
threads and hand batches over with `call_soon_threadsafe`; the offline judge scores in worker
processes; exporters and dead-letter sinks send from their own threads; flushing and shutting
down happen in threads too. Every record is either evaluated and exported or skipped with a
counted reason, and only then are its source acknowledgements released (which lets the Kafka
consumer thread commit). What waits, what is shed under load and when a record the judge failed
comes back is `collector/pipeline/queue.py`; while an exporter is saturated, evaluation waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Iterable, Sequence

from collector.assembly.assembler import AssembledTrace, TraceAssembler
from collector.assembly.conversations import ConversationTracker
from collector.conventions import ExtractionConfig, ExtractionError, read
from collector.conventions.unreadable import UnreadableTraces
from collector.feedback.sources import SpanFeedback
from collector.logs import RateLimitedLog
from collector.metrics import (
    ASSEMBLY_TRACES,
    DROPPED,
    END_TO_END,
    EVALUATIONS_DEFERRED,
    TRACES,
)
from collector.pipeline.acks import AckFlusher
from collector.pipeline.queue import EvaluationConfig, EvaluationQueue, Job, NoHold, TraceHold
from collector.pipeline.teardown import bounded, cancelled
from collector.records import RagRecord
from collector.sampling.dedup import Answer, RecentEvaluations
from collector.sampling.sampler import Sampler
from collector.spans import to_traces_data
from collector.stages import (
    DeadLetter,
    DeadLetterSink,
    EvaluationExporter,
    Evaluator,
    Outcome,
    Received,
    Receiver,
    internal_error_detail,
)

logger = logging.getLogger(__name__)
_SATURATED_POLL_S = 0.2


class Pipeline:
    def __init__(
        self,
        *,
        receivers: Sequence[Receiver],
        assembler: TraceAssembler,
        dead_letters: DeadLetterSink,
        sampler: Sampler | None = None,
        evaluator: Evaluator | None = None,
        exporters: Sequence[EvaluationExporter] = (),
        config: EvaluationConfig | None = None,
        log_records: bool = False,
        already_evaluated: Iterable[tuple[Answer, str]] = (),
        extraction: ExtractionConfig | None = None,
        feedback: SpanFeedback | None = None,
        unreadable: UnreadableTraces | None = None,
    ) -> None:
        """`already_evaluated`: `evaluation_key`s known to be scored, e.g. read back at start."""
        self.config = config or EvaluationConfig()
        self.receivers, self.assembler, self.dead_letters = list(receivers), assembler, dead_letters
        self.sampler, self.evaluator, self.exporters = sampler, evaluator, list(exporters)
        self.log_records = log_records
        self.extraction = extraction or ExtractionConfig()
        self.feedback = feedback  # human feedback rides in any trace, RAG data or not
        self.unreadable = unreadable or UnreadableTraces()
        self._recent = RecentEvaluations(ttl_s=self.config.dedup_window_s)
        for answer, metric in already_evaluated:
            self._recent.add(answer, (metric,), time.monotonic())
        self._queue = EvaluationQueue(
            self.config.queue_size, self.config.judge_retry_for_s, self.config.judge_retry_backoff_s
        )
        self._conversations = (
            ConversationTracker(sampler.config.conversations)
            if sampler is not None and evaluator is not None and sampler.conversation_metrics
            else None
        )
        # the sampler may drop a trace before it is read, unless nothing is judged or every record is logged
        self._early_sampler = sampler if evaluator is not None and not log_records else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last_tick = time.monotonic()
        self._acks = AckFlusher(self.exporters, self.config.flush_timeout_s)
        self._error_log = RateLimitedLog(interval_s=10.0)

    @property
    def alive(self) -> bool:
        """Every receiver's threads run, and the event loop ticked within the last minute."""
        loop_ok = self._loop is None or time.monotonic() - self._last_tick < 60.0
        return loop_ok and all(r.alive for r in self.receivers)

    @property
    def ready(self) -> bool:
        evaluator_ready = self.evaluator is None or self.evaluator.ready
        delivering = self.dead_letters.delivering and all(e.delivering for e in self.exporters)
        return (
            self._loop is not None and evaluator_ready and delivering and all(r.ready for r in self.receivers)
        )

    # --- ingest (called from receiver threads) -------------------------------------------
    def deliver(self, received: Received) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._ingest, received)

    def _ingest(self, received: Received) -> None:
        try:
            self.assembler.add(received.spans, received.ack, time.monotonic(), received.logs)
        except Exception as exc:  # never expected; the batch is counted and the loop goes on
            TRACES.labels("invalid").inc()
            self._error_log.log(logger, exc, "a %s batch could not be buffered (%s)", received.source, exc)
        received.ack.release()  # the hold the receiver gave us for the hand-over
        ASSEMBLY_TRACES.set(len(self.assembler))

    # --- processors ----------------------------------------------------------------------
    def _close_traces(self, traces: list[AssembledTrace]) -> None:
        for trace in traces:
            TRACES.labels("evicted" if trace.close_reason == "evicted" else "assembled").inc()
            try:
                self._process(trace)
            except Exception as exc:  # one trace must never stop the others, nor the process
                self._reject(trace, exc)
        ASSEMBLY_TRACES.set(len(self.assembler))

    def _process(self, trace: AssembledTrace) -> None:
        if self.feedback is not None:  # whatever the sampling: feedback is about any answer
            self.feedback.read(trace.spans)
        if self._early_sampler is not None and self._early_sampler.drops_early(trace.trace_id, trace.spans):
            TRACES.labels("not_sampled").inc()
            trace.release()
            return
        try:
            reading = read(trace.trace_id, trace.spans, self.extraction)
        except ExtractionError as exc:
            TRACES.labels("invalid").inc()
            self._dead_letter(trace, exc.reason, exc.detail)
            return
        records = reading.records
        if not records:
            self.unreadable.count(trace.spans, reading.unreadable)
            trace.release()
            return
        TRACES.labels("extracted").inc()
        hold = TraceHold(trace, len(records))
        for record in records:
            if self.log_records:
                logger.info("rag_record %s", _record_line(record))
            if self._conversations is not None:
                self._judge_conversations(self._conversations.add(record, time.monotonic()))
            self._sample_and_queue(record, hold)

    def _judge_conversations(self, conversations: list[tuple[RagRecord, ...]]) -> None:
        """Quiet (or evicted) conversations become jobs whose record is their last turn."""
        assert self.sampler is not None
        for turns in conversations:
            try:
                decision = self.sampler.decide_conversation(turns)
            except Exception as exc:  # never expected; one conversation must not stop the loop
                DROPPED.labels("internal_error").inc()
                self._error_log.log(
                    logger, exc, "conversation %s not judged (%s)", turns[-1].conversation_id, exc
                )
                continue
            if decision.sampled:
                self._queue.put(Job(turns[-1], decision, NoHold()))

    def _sample_and_queue(self, record: RagRecord, hold: TraceHold) -> None:
        if self.evaluator is None or self.sampler is None:
            hold.release()
            return
        decision = self.sampler.decide(record)
        if not decision.sampled:
            hold.release()
            return
        self._queue.put(Job(record, decision, hold))

    def _reject(self, trace: AssembledTrace, exc: Exception) -> None:
        """An unexpected exception while processing a trace: counted, dead-lettered, logged (rate-limited).

        Once dead-lettered the trace's source records are acknowledged, so on Kafka the offset moves
        past it: a trace that crashes the code once would crash it on every replica after every restart.
        """
        TRACES.labels("invalid").inc()
        detail = internal_error_detail(exc)
        self._error_log.log(logger, exc, "trace %s could not be processed (%s)", trace.trace_id, detail)
        self._dead_letter(trace, "internal_error", detail)

    def _dead_letter(self, trace: AssembledTrace, reason: str, detail: str) -> None:
        """The trace's acks are released once the sink has the letter (from the sink's thread)."""
        try:
            payload = to_traces_data(trace.spans).SerializeToString()
            letter = DeadLetter(reason, detail, payload, trace.trace_id.encode(), source="extract")
            self.dead_letters.write(letter, on_written=trace.release)
        except Exception:
            logger.warning("dead letter of trace %s failed", trace.trace_id)
            trace.release()

    async def _worker(self) -> None:
        while True:
            job = await self._queue.get()
            while any(exporter.saturated for exporter in self.exporters):  # a backend is down: wait
                await asyncio.sleep(_SATURATED_POLL_S)
            done = True
            try:
                done = await self._evaluate(job)
            except asyncio.CancelledError:  # shutdown deadline: not acknowledged, so handed back
                self._queue.task_done()
                raise
            except Exception as exc:  # a bug must not kill the worker
                self._error_log.log(
                    logger, exc, "evaluation of trace %s failed (%s)", job.record.trace_id, exc
                )
                DROPPED.labels("internal_error").inc()
            if done:
                job.decision.release()  # the judge budget it reserved and did not spend
                self._acks.add(job.hold.release)  # released once every exporter confirmed it flushed
            self._queue.task_done()

    async def _evaluate(self, job: Job) -> bool:
        """Evaluate and export; False when the judge could not score it and it will be tried again."""
        assert self.evaluator is not None and self.sampler is not None
        now = time.monotonic()
        answer = (job.record.trace_id, job.record.anchor_span_id)
        metrics = [m for m in job.decision.metrics if not self._recent.seen(answer, m, now)]
        if not metrics:
            DROPPED.labels("duplicate").inc()
            return True
        evaluations, spend = await self.evaluator.evaluate(job.record, metrics, job.decision.case)
        self.sampler.record_spend(spend.tokens, spend.usd, reserved=job.decision)
        if not evaluations or all(e.outcome is Outcome.ERROR for e in evaluations):  # the judge failed
            if self._queue.retry_later(job, judge_called=bool(evaluations)):
                EVALUATIONS_DEFERRED.labels("judge_error" if evaluations else "circuit_open").inc(
                    len(metrics)
                )
                return False
            if not evaluations:  # never scored in the whole retry window: exported as an error, not dropped
                waited_s = time.monotonic() - job.first_failure
                waited = f"{waited_s / 60:.0f} min" if waited_s >= 90 else f"{waited_s:.0f} s"
                reason = f"judge unavailable for {waited} (evaluation.judge_retry_for_s)"
                evaluations = self.evaluator.unavailable(metrics, reason)
        for exporter in self.exporters:  # each buffers and sends from its own thread: none blocks here
            try:
                exporter.export(job.record, evaluations)
            except Exception as exc:
                self._error_log.log(logger, exc, "exporter %s failed (%s)", type(exporter).__name__, exc)
        self._recent.add(answer, (e.metric for e in evaluations), time.monotonic())
        if job.record.end_time_unix_nano:
            END_TO_END.observe(max(0.0, time.time() - job.record.end_time_unix_nano / 1e9))
        return True

    # --- lifecycle -----------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Run until `stop` is set, then shut down gracefully within the configured deadline."""
        self._loop = asyncio.get_running_loop()
        workers = [asyncio.create_task(self._worker()) for _ in range(self.config.workers)]
        workers.append(asyncio.create_task(self._acks.run(self.config.flush_interval_s)))
        for receiver in self.receivers:
            receiver.start(self.deliver)
        try:
            while not stop.is_set():
                self._last_tick = time.monotonic()
                self._close_traces(self.assembler.expire(time.monotonic()))
                if self._conversations is not None:
                    self._judge_conversations(self._conversations.quiet(time.monotonic()))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.config.tick_s)
        finally:
            await self._shutdown(workers)

    async def _shutdown(self, workers: list[asyncio.Task[None]]) -> None:
        for receiver in self.receivers:
            receiver.stop()
        await asyncio.sleep(0)  # let hand-overs already scheduled by receiver threads run
        self._close_traces(self.assembler.drain())
        if self._conversations is not None:  # graceful: every open conversation is judged now
            self._judge_conversations(self._conversations.drain())
        try:
            await asyncio.wait_for(self._queue.join(), self.config.shutdown_deadline_s)
        except TimeoutError:
            logger.warning(
                "shutdown deadline passed with %d records queued; they are handed back", self._queue.qsize()
            )
        await cancelled(workers, "evaluation workers")
        await self._acks.flush()
        # Blocking teardown, off the loop: exporters flush, dead letters are written, then each
        # receiver's own thread makes its final commit. Bounded: a component that never returns is
        # named and left behind, so SIGTERM always ends the process.
        deadline = time.monotonic() + self.config.shutdown_deadline_s
        steps = [
            *((type(e).__name__, e.shutdown) for e in self.exporters),
            ("dead letters", self.dead_letters.close),
            *((("judge", self.evaluator.shutdown),) if self.evaluator is not None else ()),
            *((f"receiver {r.name}", r.shutdown) for r in self.receivers),
        ]
        for what, step in steps:
            await bounded(what, step, max(1.0, deadline - time.monotonic()))


def _record_line(record: RagRecord) -> str:
    """`--log-records`: what was extracted, texts cut at 2,000 characters (a debugging aid, opt-in)."""
    return json.dumps(record.summary(max_chars=2000), ensure_ascii=False)
