"""Ingest throughput: spans/s decoded + assembled + extracted on one core.

A realistic mix: traces of 4 spans (HTTP server span, chain, retriever with 5 nodes of ~500
characters, LLM; 2 spans for the one-span ragpulse convention) in the OpenInference, GenAI,
OpenLLMetry and ragpulse conventions, one `otlp_proto` record per trace (the kafkaexporter's
partition_traces_by_id form). Goal: >= 20,000 spans/s per core.

    python benchmarks/ingest.py [--traces 4000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.assemble import AssemblyConfig, TraceAssembler
from collector.conventions import extract
from collector.decode import decode
from collector.offsets import NoAck
from collector.spans import flatten
from tests.support.rag_traces import BUILDERS, Collect, RagCase, encode, provider

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


def run(records: list[bytes]) -> tuple[int, int, float]:
    assembler = TraceAssembler(AssemblyConfig(quiet_period_s=0.0))
    ack = NoAck()
    spans_seen = extracted = 0
    started = time.process_time()
    for now, payload in enumerate(records):
        spans = flatten(decode(payload))
        spans_seen += len(spans)
        assembler.add(spans, ack, float(now))
        for trace in assembler.expire(float(now)):
            if extract(trace.trace_id, trace.spans) is not None:
                extracted += 1
    for trace in assembler.drain():
        if extract(trace.trace_id, trace.spans) is not None:
            extracted += 1
    return spans_seen, extracted, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=4000)
    args = parser.parse_args()
    records = make_records(args.traces)
    run(records[:200])  # warm-up
    spans, extracted, cpu_s = run(records)
    rate = spans / cpu_s
    mean_bytes = sum(map(len, records)) / len(records)
    print(f"records: {len(records)} ({mean_bytes:,.0f} bytes each), spans: {spans}, RagRecords: {extracted}")
    print(
        f"decode+assemble+extract: {rate:,.0f} spans/s per core ({cpu_s:.2f} s CPU), "
        f"{extracted / cpu_s:,.0f} traces/s"
    )
    print(f"goal {GOAL_SPANS_PER_S:,} spans/s: ratio {rate / GOAL_SPANS_PER_S:.2f}x")


if __name__ == "__main__":
    main()
