"""`ragpulse inspect`: what ragpulse makes of your traces, before (or instead of) running it.

"My traces are not scored" is the first question of every new user, and the answer is in the spans,
where reading OTLP by eye is hopeless. This reads OTLP files (protobuf or JSON, traces or logs, or
the JSON lines the OTel Collector's `file` exporter writes), or listens on the embedded OTLP
receivers for a while, assembles traces exactly as the sidecar does, and shows per trace what
extraction found, what the sidecar would dead-letter, or why it found nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collector import conventions
from collector.assembly.assembler import AssembledTrace, AssemblyConfig, TraceAssembler
from collector.conventions import ExtractionConfig
from collector.pipeline.offsets import NoAck
from collector.receivers.decode import DecodeError, Encoding, decode, decode_logs
from collector.records import RagRecord
from collector.spans import LogEvent, Span, flatten, flatten_logs
from collector.stages import Received, internal_error_detail

if TYPE_CHECKING:
    from collector.config import Settings

PASSAGE_CHARS, TEXT_CHARS = 120, 500
# Offline, everything read belongs in the report: no memory bound evicts a trace early.
_UNBOUNDED = AssemblyConfig(max_spans_per_trace=10**9, max_traces=10**9, max_spans=10**12)


class InspectError(Exception):
    """A file that cannot be read as OTLP; the message is one line for the user."""


@dataclass
class TraceReport:
    trace_id: str
    spans: int
    log_events: int  # log records joined to one of the trace's spans
    records: list[RagRecord] = field(default_factory=list)
    error: str | None = None  # what the sidecar would dead-letter, as "reason: detail"
    notes: list[str] = field(default_factory=list)  # why nothing was found


# --- reading ---------------------------------------------------------------------------------
def read_file(path: Path) -> tuple[list[Span], list[LogEvent]]:
    """Spans and log events of one file; raises InspectError with a one-line reason."""
    try:
        payload = path.read_bytes()
    except OSError as exc:
        raise InspectError(exc.strerror or str(exc)) from None
    logs_by_name = "logs" in path.name.lower()
    spans: list[Span] = []
    logs: list[LogEvent] = []
    for where, document in _documents(payload):
        try:
            more_spans, more_logs = _read_document(document, logs_by_name)
        except DecodeError as exc:
            raise InspectError(f"{where}not OTLP ({exc.reason}: {exc.detail[:200]})") from None
        except Exception as exc:  # a reader bug must still leave one line, not a traceback
            raise InspectError(f"{where}unreadable ({type(exc).__name__}: {str(exc)[:200]})") from None
        spans += more_spans
        logs += more_logs
    if not spans and not logs:
        raise InspectError("no OTLP spans or log records in it")
    return spans, logs


def _documents(payload: bytes) -> list[tuple[str, bytes]]:
    """One document, or one per line of a JSON lines file (the Collector's `file` exporter)."""
    if payload.lstrip()[:1] != b"{":
        return [("", payload)]
    try:
        json.loads(payload)
        return [("", payload)]
    except (ValueError, RecursionError):
        pass
    lines = [(n, line) for n, line in enumerate(payload.splitlines(), 1) if line.strip()]
    if len(lines) < 2:
        return [("", payload)]  # decode reports what is wrong with it
    return [(f"line {n}: ", line) for n, line in lines]


def _read_document(document: bytes, logs_by_name: bool) -> tuple[list[Span], list[LogEvent]]:
    if document.lstrip()[:1] in (b"{", b"["):
        if logs_by_name or b'"resourceLogs"' in document or b'"resource_logs"' in document:
            return [], flatten_logs(decode_logs(document, Encoding.OTLP_JSON))
        return flatten(decode(document, Encoding.OTLP_JSON)), []
    if logs_by_name:
        return [], flatten_logs(decode_logs(document, Encoding.OTLP_PROTO))
    first_error: DecodeError | None = None
    try:  # protobuf says nothing of its type: traces, unless only logs make sense of it
        spans = flatten(decode(document, Encoding.OTLP_PROTO))
    except DecodeError as error:
        spans, first_error = [], error
    if any(len(s.trace_id) == 32 for s in spans):
        return spans, []
    try:
        return [], flatten_logs(decode_logs(document, Encoding.OTLP_PROTO))
    except DecodeError:
        if first_error is not None:
            raise first_error from None
        return [], []


def assemble(spans: Iterable[Span], logs: Iterable[LogEvent]) -> list[AssembledTrace]:
    assembler = TraceAssembler(_UNBOUNDED)
    assembler.add(spans, NoAck(), 0.0, logs)
    return assembler.drain()


# --- extracting --------------------------------------------------------------------------------
def inspect_trace(
    trace: AssembledTrace, log_event_ids: set[int], extraction: ExtractionConfig
) -> TraceReport:
    """Extract as the pipeline does; an unexpected exception is reported, as the pipeline dead-letters it.

    `log_event_ids`: ids of the Event objects that came from log records (to count those joined).
    """
    joined = sum(1 for s in trace.spans for e in s.events if id(e) in log_event_ids)
    report = TraceReport(trace.trace_id, len(trace.spans), joined)
    if not trace.spans:
        report.notes = ["only log records of this trace were read: its spans are not in the input"]
        return report
    try:
        report.records = conventions.extract(trace.trace_id, trace.spans, extraction)
    except conventions.ExtractionError as exc:
        report.error = f"{exc.reason}: {exc.detail}"
    except Exception as exc:  # the sidecar counts it invalid and dead-letters it as internal_error
        report.error = f"internal_error: {internal_error_detail(exc)}"
    if not report.records and report.error is None:
        report.notes = _notes(trace.spans, extraction)
    return report


def _notes(spans: list[Span], extraction: ExtractionConfig) -> list[str]:
    try:
        return conventions.explain(spans, extraction)
    except Exception as exc:  # explaining must never hide the report
        return [f"(explain failed: {type(exc).__name__}: {exc})"]


# --- rendering ---------------------------------------------------------------------------------
def as_json(report: TraceReport) -> dict[str, Any]:
    records = []
    for record in report.records:
        summary = record.summary(TEXT_CHARS)
        for node in summary["nodes"]:  # type: ignore[attr-defined]
            node["text"] = node["text"][:PASSAGE_CHARS]
        records.append(summary)
    conventions_found = sorted({r.convention for r in report.records})
    return _finite(
        {
            "trace_id": report.trace_id,
            "spans": report.spans,
            "log_events": report.log_events,
            "conventions": conventions_found,
            "records": records,
            "error": report.error,
            "notes": report.notes,
        }
    )


def _finite(value: Any) -> Any:
    """JSON has no NaN or Infinity: such scores are shown as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def as_text(report: TraceReport) -> str:
    logs = f", {report.log_events} log event(s) joined" if report.log_events else ""
    matched = ", ".join(sorted({r.convention for r in report.records}))
    matched = f"; matched {matched}" if matched else ""
    lines = [f"trace {report.trace_id}: {report.spans} span(s){logs}{matched}"]
    if report.error:
        lines.append(f"  invalid, would be dead-lettered: {report.error}")
    for number, record in enumerate(report.records, 1):
        labels = f"service={record.service} route={record.route or '-'} model={record.model or '-'}"
        conversation = f" conversation_id={record.conversation_id}" if record.conversation_id else ""
        lines.append(f"  record {number}: convention={record.convention} anchor span {record.anchor_span_id}")
        lines.append(f"    {labels}{conversation}")
        lines.append(f"    query:    {_cut(record.query, TEXT_CHARS)}")
        lines.append(f"    passages: {len(record.nodes)}")
        for node in record.nodes:
            score = "-" if node.score is None else f"{node.score:.3f}"
            lines.append(f"      [{node.id}] score={score} {_cut(node.text, PASSAGE_CHARS)}")
        lines.append(f"    response: {_cut(record.response, TEXT_CHARS)}")
    if report.notes:
        lines.append("  no RAG record:")
        lines.extend(f"    - {note}" for note in report.notes)
    return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def print_reports(
    traces: list[AssembledTrace], log_event_ids: set[int], extraction: ExtractionConfig, as_lines: bool
) -> None:
    for trace in traces:
        report = inspect_trace(trace, log_event_ids, extraction)
        if as_lines:
            print(json.dumps(as_json(report), ensure_ascii=False, allow_nan=False))
        else:
            print(as_text(report) + "\n")


# --- listening ---------------------------------------------------------------------------------
def listen(seconds: float, settings: Settings) -> tuple[list[Span], list[LogEvent]]:
    """What the embedded OTLP receivers get in `seconds` (never Kafka: inspecting must not join the group).

    The receivers are the sidecar's own, built by its composition root; what they deliver is kept
    and assembled afterwards exactly like a file's content.
    """
    from collector.pipeline.service import build

    receivers = build(settings.with_values(**{"kafka.bootstrap_servers": None}), evaluate=False).receivers
    batches: list[Received] = []
    lock, stop = threading.Lock(), threading.Event()

    def deliver(received: Received) -> None:
        with lock:
            batches.append(received)
        received.ack.release()

    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    started = []
    try:
        for receiver in receivers:
            receiver.start(deliver)
            started.append(receiver)
        print(f"ragpulse inspect: listening for {seconds:g} s (Ctrl-C stops early)", file=sys.stderr)
        stop.wait(seconds)
    finally:
        for receiver in started:
            receiver.shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return [s for b in batches for s in b.spans], [log for b in batches for log in b.logs]


def main(args: argparse.Namespace) -> int:
    """0 when every input was read; 1 when a file was not OTLP (one line each on stderr); 2 on usage."""
    if bool(args.files) == (args.listen is not None):
        print("ragpulse inspect: give FILE... or --listen SECONDS", file=sys.stderr)
        return 2
    from collector.config import load_settings

    settings = load_settings(
        args.config, **{"otlp.port": args.otlp_port, "otlp.grpc_port": args.otlp_grpc_port}
    )
    spans: list[Span] = []
    logs: list[LogEvent] = []
    if args.listen is not None:
        try:
            spans, logs = listen(args.listen, settings)
        except OSError as exc:
            print(f"ragpulse inspect: cannot listen: {exc}", file=sys.stderr)
            return 1
        print_reports(assemble(spans, logs), {id(log.event) for log in logs}, settings.extraction, args.json)
        return 0
    failed = False
    for path in args.files:
        try:
            more_spans, more_logs = read_file(path)
        except InspectError as exc:
            print(f"ragpulse inspect: {path}: {exc}", file=sys.stderr)
            failed = True
            continue
        spans += more_spans
        logs += more_logs
    print_reports(assemble(spans, logs), {id(log.event) for log in logs}, settings.extraction, args.json)
    return 1 if failed else 0
