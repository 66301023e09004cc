"""Ingest throughput: spans/s decoded + assembled + extracted on one core.

Two mixes, one `otlp_proto` record per trace (the kafkaexporter's partition_traces_by_id form):
- synthetic: traces of 4 spans (HTTP server span, chain, retriever with 5 nodes of ~500 characters,
  LLM; 2 spans for the one-span ragpulse convention) in the OpenInference, GenAI, OpenLLMetry and
  ragpulse conventions;
- real: the traces the real instrumentation libraries produced for the conformance suite
  (tests/data/instrumentation: LlamaIndex, LangChain, Haystack and openai-SDK apps under
  OpenInference, OpenLLMetry and the official GenAI instrumentation, index builds included), replayed.
Goal: >= 20,000 spans/s per core.

    python -m benchmarks.ingest [--traces 4000]
"""

from __future__ import annotations

import argparse
import time

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from collector.assemble import AssemblyConfig, TraceAssembler
from collector.conventions import extract
from collector.decode import decode, decode_logs
from collector.offsets import NoAck
from collector.spans import flatten, flatten_logs
from testkit import CAPTURES
from testkit.kafka_forwarder import split_by_trace
from testkit.rag_traces import BUILDERS, Collect, RagCase, encode, provider

PASSAGE = ("Retrieval-augmented generation grounds a model's answer in passages fetched from an index. " * 6)[
    :500
]
GOAL_SPANS_PER_S = 20_000


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


def run(records: list[bytes], logs: list | None = None) -> tuple[int, int, float]:
    assembler = TraceAssembler(AssemblyConfig(quiet_period_s=0.0))
    ack = NoAck()
    spans_seen = extracted = 0
    started = time.process_time()
    for now, payload in enumerate(records):
        spans = flatten(decode(payload))
        spans_seen += len(spans)
        trace_logs = [log for log in logs or () if log.trace_id == spans[0].trace_id] if logs else []
        assembler.add(spans, ack, float(now), trace_logs)
        for trace in assembler.expire(float(now)):
            extracted += len(extract(trace.trace_id, trace.spans))
    for trace in assembler.drain():
        extracted += len(extract(trace.trace_id, trace.spans))
    return spans_seen, extracted, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=4000)
    args = parser.parse_args()
    real, logs = real_records(args.traces)
    for name, records, events in (("synthetic", make_records(args.traces), None), ("real", real, logs)):
        run(records[:200], events)  # warm-up
        spans, extracted, cpu_s = run(records, events)
        rate = spans / cpu_s
        mean_bytes = sum(map(len, records)) / len(records)
        print(
            f"{name}: records: {len(records)} ({mean_bytes:,.0f} bytes each), spans: {spans}, "
            f"RagRecords: {extracted}"
        )
        print(
            f"  decode+assemble+extract: {rate:,.0f} spans/s per core ({cpu_s:.2f} s CPU), "
            f"{len(records) / cpu_s:,.0f} records/s; goal {GOAL_SPANS_PER_S:,} spans/s: "
            f"ratio {rate / GOAL_SPANS_PER_S:.2f}x"
        )


if __name__ == "__main__":
    main()
