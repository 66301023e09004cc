"""Ingest throughput: spans/s decoded + assembled + extracted on one core, beside protobuf parse+walk.

Two mixes, one `otlp_proto` record per trace (the kafkaexporter's partition_traces_by_id form):
- synthetic: traces of 4 spans (HTTP server span, chain, retriever with 5 nodes of ~500 characters,
  LLM; 2 spans for the one-span ragpulse convention) in the OpenInference, GenAI, OpenLLMetry and
  ragpulse conventions;
- real: the traces the real instrumentation libraries produced for the conformance suite
  (tests/data/instrumentation: LlamaIndex, LangChain, Haystack and openai-SDK apps under
  OpenInference, OpenLLMetry and the official GenAI instrumentation, index builds included), replayed.
Goal: >= 20,000 spans/s per core.

Per mix, on the same payloads in one run (interleaved three times, the least CPU of each kept):
parse+walk (protobuf parse, then every span's ids, name and attribute values visited: the least any
reader does), the full path (decode, flatten, assemble, extract: the "decode+assemble+extract" line of
earlier runs) at 100% sampling and at 10% (`Sampler.drops_early` before extraction), then at 10% with
span feedback read from every trace as the pipeline does by default; each as a ratio of parse+walk
(issue 49's targets: >= 0.5 at 100%; at 10%, >= 3x the 100% figure of before it). Then spans per
server CPU-second over OTLP/HTTP at 1 and 50 traces per request: a real `ragpulse run` subprocess, one
keep-alive connection per series, its own CPU time (psutil: its main process, not the offline judge's
workers; the sender's never) at sampling.rate 1.0 and 0.1. `--no-http` skips that part.

    nice -n 5 python -m benchmarks.ingest [--traces 4000] [--no-http]
"""

from __future__ import annotations

import argparse
import http.client
import math
import os
import time

import psutil
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

from collector.assembly.assembler import AssemblyConfig, TraceAssembler
from collector.conventions import extract
from collector.feedback.agreement import FeedbackJoin
from collector.feedback.sources import SpanFeedback
from collector.pipeline.offsets import NoAck
from collector.receivers.decode import decode, decode_logs
from collector.sampling.sampler import Sampler, SamplingConfig
from collector.spans import flatten, flatten_logs
from testkit import CAPTURES
from testkit.kafka_forwarder import split_by_trace
from testkit.process import RagpulseProcess
from testkit.rag_traces import BUILDERS, Collect, RagCase, encode, provider
from testkit.scrape import scrape

PASSAGE = ("Retrieval-augmented generation grounds a model's answer in passages fetched from an index. " * 6)[
    :500
]
GOAL_SPANS_PER_S = 20_000
SAMPLED_RATE = 0.1


def make_records(traces: int) -> list[bytes]:
    case = RagCase(nodes=[(f"doc-{i}", PASSAGE, 0.9 - i / 10) for i in range(5)])
    records = []
    conventions = list(BUILDERS.values())
    for i in range(traces):
        collect = Collect()
        tracer_provider = provider(collect)
        with tracer_provider.get_tracer("bench").start_as_current_span("POST /ask"):  # the HTTP server span
            conventions[i % len(conventions)](tracer_provider, case)
        records.append(encode(collect.spans))
    return records


def real_records(traces: int) -> tuple[list[bytes], list]:
    """The captured real traces, one record per trace, cycled to `traces` records; and their log events."""
    captured, logs = [], []
    for folder in sorted(CAPTURES.iterdir()):
        request = ExportTraceServiceRequest.FromString(
            decode((folder / "traces.json").read_bytes()).SerializeToString()
        )
        captured += [part.SerializeToString() for part in split_by_trace(request).values()]
        logs += flatten_logs(decode_logs((folder / "logs.json").read_bytes()))
    return [captured[i % len(captured)] for i in range(traces)], logs


def parse_walk(records: list[bytes]) -> tuple[int, float]:
    """Spans and CPU seconds to parse each payload and visit every span's ids, name and attribute values."""
    spans = 0
    started = time.process_time()
    for payload in records:
        for resource_spans in TracesData.FromString(payload).resource_spans:
            for kv in resource_spans.resource.attributes:
                kv.value.WhichOneof("value")
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans += 1
                    span.trace_id, span.span_id, span.parent_span_id, span.name  # noqa: B018
                    for kv in span.attributes:
                        getattr(kv.value, kv.value.WhichOneof("value") or "string_value")
    return spans, time.process_time() - started


def run(
    records: list[bytes], logs: list | None = None, rate: float | None = None, feedback: bool = False
) -> tuple[int, int, float]:
    """Decode, flatten, assemble and extract every record; with `rate`, extract only what the sampler's
    early decision keeps, and with `feedback` read span feedback from every trace first (what
    `Pipeline._process` does with `feedback.enabled`, the default)."""
    assembler = TraceAssembler(AssemblyConfig(quiet_period_s=0.0))
    sampler = Sampler(SamplingConfig(rate=rate)) if rate is not None else None
    span_feedback = SpanFeedback(FeedbackJoin()) if feedback else None
    ack = NoAck()
    spans_seen = extracted = 0
    started = time.process_time()

    def close(traces: list) -> int:
        if span_feedback is not None:
            for trace in traces:
                span_feedback.read(trace.spans)
        return sum(
            len(extract(trace.trace_id, trace.spans))
            for trace in traces
            if sampler is None or not sampler.drops_early(trace.trace_id, trace.spans)
        )

    for now, payload in enumerate(records):
        spans = flatten(decode(payload))
        spans_seen += len(spans)
        trace_logs = [log for log in logs or () if log.trace_id == spans[0].trace_id] if logs else []
        assembler.add(spans, ack, float(now), trace_logs)
        extracted += close(assembler.expire(float(now)))
    extracted += close(assembler.drain())
    return spans_seen, extracted, time.process_time() - started


def in_process(name: str, records: list[bytes], logs: list | None, rounds: int = 3) -> None:
    """Parse+walk, the full path at 100% and at 10%, interleaved `rounds` times; the least CPU of each
    counts (on a shared machine the other processes only ever add to a round)."""
    parse_walk(records[:200])
    run(records[:200], logs)  # warm-up
    walk_s = cpu_s = sampled_s = feedback_s = float("inf")
    for _ in range(rounds):
        walked, cpu = parse_walk(records)
        walk_s = min(walk_s, cpu)
        spans, extracted, cpu = run(records, logs)
        cpu_s = min(cpu_s, cpu)
        spans, sampled, cpu = run(records, logs, SAMPLED_RATE)
        sampled_s = min(sampled_s, cpu)
        spans, _, cpu = run(records, logs, SAMPLED_RATE, feedback=True)
        feedback_s = min(feedback_s, cpu)
    walk_rate, rate, rate_sampled = walked / walk_s, spans / cpu_s, spans / sampled_s
    mean_bytes = sum(map(len, records)) / len(records)
    print(
        f"{name}: records: {len(records)} ({mean_bytes:,.0f} bytes each), spans: {spans}, "
        f"RagRecords: {extracted}"
    )
    print(f"  parse+walk: {walk_rate:,.0f} spans/s per core ({walk_s:.2f} s CPU)")
    print(
        f"  decode+assemble+extract: {rate:,.0f} spans/s per core ({cpu_s:.2f} s CPU), "
        f"{len(records) / cpu_s:,.0f} records/s; goal {GOAL_SPANS_PER_S:,} spans/s: "
        f"ratio {rate / GOAL_SPANS_PER_S:.2f}x"
    )
    print(
        f"  full path at 100% sampling: {rate:,.0f} spans/s per core = {rate / walk_rate:.3f} of parse+walk"
    )
    print(
        f"  full path at {SAMPLED_RATE:.0%} sampling: {rate_sampled:,.0f} spans/s per core = "
        f"{rate_sampled / walk_rate:.3f} of parse+walk, {rate_sampled / rate:.2f}x the 100% path "
        f"({sampled} RagRecords extracted)"
    )
    with_feedback = spans / feedback_s
    print(
        f"  ... and span feedback read from every trace (feedback.enabled, the default: every span's keys "
        f"and event names are read): {with_feedback:,.0f} spans/s per core = {with_feedback / walk_rate:.3f} "
        f"of parse+walk, {with_feedback / rate:.2f}x the 100% path"
    )


def server_cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def over_http(records: list[bytes], sampling_rate: float) -> None:
    """Spans per server CPU-second at 1 and 50 traces per request (distinct traces for each)."""
    env = {"RAGPULSE_SAMPLING__RATE": str(sampling_rate)}
    with RagpulseProcess("--quiet-period", "0.2", "--quiet", env=env) as ragpulse:
        assert ragpulse.process is not None
        server = psutil.Process(ragpulse.process.pid)
        headers = {"Content-Type": "application/x-protobuf"}
        offset, closed = 0, 0.0
        for per_request, traces in ((1, 400), (50, 2000)):
            batch = records[offset : offset + traces]
            offset += traces
            bodies = [b"".join(batch[i : i + per_request]) for i in range(0, len(batch), per_request)]
            spans = sum(len(flatten(decode(body))) for body in bodies)
            idle = _idle_rate(server)
            connection = http.client.HTTPConnection("127.0.0.1", ragpulse.otlp_port, timeout=30)
            started, since = server_cpu(server), time.monotonic()
            for body in bodies:  # concatenated TracesData messages are one message with every trace
                connection.request("POST", "/v1/traces", body=body, headers=headers)
                response = connection.getresponse()
                response.read()
                assert response.status == 200, response.status
            connection.close()
            used = _settle(server, idle, since) - started
            closed += len(batch)
            done = _closed(ragpulse.metrics_port)
            print(
                f"  OTLP/HTTP, sampling.rate {sampling_rate}, {per_request:>2} traces per request: "
                f"{spans / used:,.0f} spans per server CPU-second, {used / len(bodies) * 1000:.2f} ms "
                f"per request ({len(bodies)} requests, {done:.0f} of {closed:.0f} traces closed; at rest "
                f"{idle:.3f} CPU-s/s, subtracted)"
            )


def _idle_rate(server: psutil.Process) -> float:
    """The server's CPU seconds per second at rest (its loop ticks, its threads poll), once it is."""
    _settle(server, 0.0, time.monotonic())
    before = server_cpu(server)
    time.sleep(2.0)
    return (server_cpu(server) - before) / 2.0


def _settle(server: psutil.Process, idle_per_s: float, since: float) -> float:
    """Wait until the server is back at rest (four quiet half-seconds in a row: judging may go on after
    the last request); its CPU time then, less what rest cost since `since`."""
    window, quiet, previous = 0.5, 0, server_cpu(server)
    for _ in range(600):
        time.sleep(window)
        now = server_cpu(server)
        quiet = quiet + 1 if now - previous <= max(0.01, idle_per_s * window * 1.5) else 0
        previous = now
        if quiet == 4:
            break
    return now - idle_per_s * (time.monotonic() - since)


def _closed(metrics_port: int) -> float:
    """Traces the server closed (assembled or evicted), from its /metrics; NaN when it cannot say."""
    try:
        values = scrape(metrics_port)
    except OSError:  # a scrape that fails costs the figure's cross-check, not the figure
        return math.nan
    return values.value("ragpulse_traces_total", state="assembled") + values.value(
        "ragpulse_traces_total", state="evicted"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=4000)
    parser.add_argument("--no-http", action="store_true", help="skip the OTLP/HTTP server figures")
    args = parser.parse_args()
    real, logs = real_records(args.traces)
    synthetic = make_records(args.traces)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    for name, records, events in (("synthetic", synthetic, None), ("real", real, logs)):
        in_process(name, records, events)
    if not args.no_http:
        print("synthetic over OTLP/HTTP:")
        http_records = synthetic if len(synthetic) >= 2400 else make_records(2400)
        for sampling_rate in (1.0, SAMPLED_RATE):
            over_http(http_records, sampling_rate)


if __name__ == "__main__":
    main()
