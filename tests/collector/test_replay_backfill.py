"""`ragpulse replay` backfills: right after `ragpulse run` scored a range (well inside its 600 s duplicate
window, with the results topic it reads that window back from), a replay of the same range scores every
trace again and writes the new results; it says what it read, scored, exported and skipped, and why;
with nowhere to write it refuses in one line.

All real: a Kafka broker, `ragpulse run` and `ragpulse replay` as subprocesses, the offline judge.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

from kafka import KafkaProducer

from ragpulse_sdk import KafkaSpanExporter
from testkit.collector_runner import wait_for
from testkit.kafka_read import read_topic
from testkit.process import RagpulseProcess
from testkit.rag_traces import provider
from tests.collector.test_pipeline_e2e import _produce
from tests.collector.test_replay import now as _now
from tests.collector.test_replay import replay as _replay

METRICS = 5  # sampling.metrics' default set, each scored on every trace here


def _results(bootstrap: str, topic: str) -> list[dict[str, object]]:
    return [json.loads(record.value) for record in read_topic(bootstrap, topic)]


def _no_rag_trace_and_poison(bootstrap: str, topic: str) -> None:
    """One trace with no RAG data in it, and one Kafka record that is no OTLP payload at all."""
    exporter = KafkaSpanExporter(bootstrap, topic)
    with provider(exporter, service="shop-assistant").get_tracer("app").start_as_current_span("GET /health"):
        pass
    exporter.shutdown()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(topic, b"\x00 not a protobuf payload")
    producer.flush()
    producer.close()


def test_replay_rescores_what_run_just_scored_and_writes_it(kafka_bootstrap: str, kafka_topic) -> None:
    topic, results = kafka_topic(), kafka_topic()
    start = _now()
    time.sleep(1.0)  # the range's first record is after --from on the broker's clock
    _produce(kafka_bootstrap, topic, total=3, hallucinated=1)
    _no_rag_trace_and_poison(kafka_bootstrap, topic)
    time.sleep(1.0)
    end = _now()
    to_results = {"RAGPULSE_RESULTS__BOOTSTRAP_SERVERS": kafka_bootstrap, "RAGPULSE_RESULTS__TOPIC": results}

    with RagpulseProcess(
        "--kafka-bootstrap",
        kafka_bootstrap,
        "--topic",
        topic,
        "--quiet-period",
        "0.2",
        "--quiet",
        env=to_results,
    ):
        wait_for(lambda: len(_results(kafka_bootstrap, results)) >= 3 * METRICS, 120, "3 traces scored")
    first = _results(kafka_bootstrap, results)
    assert len({r["trace_id"] for r in first}) == 3 and len(first) == 3 * METRICS

    # Seconds later, inside dedup_window_s, with the results topic that seeds the duplicate filter.
    replay = _replay(kafka_bootstrap, topic, start, end, to_results)
    assert replay.returncode == 0, replay.stderr[-3000:]
    lines = replay.stdout.splitlines()
    assert lines[0] == f"ragpulse replay {start} .. {end}: read 5 records", replay.stdout
    assert lines[1].startswith(f"  scored 3 traces (3 generations): {3 * METRICS} results ("), replay.stdout
    assert lines[2] == f"  exported {3 * METRICS} results to results topic {results}", replay.stdout
    assert lines[3] == "  skipped: dead_letter_malformed_protobuf 1, no_rag_data 1", replay.stdout
    assert len(lines) == 4, replay.stdout

    after = _results(kafka_bootstrap, results)
    assert len(after) == 2 * 3 * METRICS  # every (trace, metric) once from run, once from the replay
    assert set(Counter((r["trace_id"], r["metric"]) for r in after).values()) == {2}
    replayed = after[len(first) :]
    faithfulness = {r["trace_id"]: r["outcome"] for r in replayed if r["metric"] == "faithfulness"}
    assert faithfulness == {r["trace_id"]: r["outcome"] for r in first if r["metric"] == "faithfulness"}
    assert sorted(faithfulness.values()) == ["failed", "passed", "passed"]


def test_replay_with_nowhere_to_write_refuses_in_one_line(kafka_bootstrap: str, kafka_topic) -> None:
    topic = kafka_topic()
    replay = _replay(kafka_bootstrap, topic, "2026-01-01T00:00:00Z", _now(), {})
    assert replay.returncode == 2 and replay.stdout == ""
    (line,) = replay.stderr.splitlines()
    assert line.startswith("ragpulse replay: nowhere to write the scores (Prometheus metrics end with this")
    assert "results.bootstrap_servers" in line and "page.store_path" in line
    # An in-memory page (the default) is no destination either; a page store file is.
    in_memory = _replay(
        kafka_bootstrap, topic, "2026-01-01T00:00:00Z", _now(), {"RAGPULSE_PAGE__ENABLED": "true"}
    )
    assert in_memory.returncode == 2 and "nowhere to write" in in_memory.stderr


class _Refuses(BaseHTTPRequestHandler):
    """An OTLP endpoint that takes nothing: 400 to every request."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(400)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _refusing_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    finally:
        server.shutdown()
        server.server_close()


def test_results_an_exporter_did_not_deliver_are_counted_and_fail_the_replay(
    kafka_bootstrap: str, kafka_topic
) -> None:
    topic = kafka_topic()
    start = _now()
    time.sleep(1.0)
    _produce(kafka_bootstrap, topic, total=2, hallucinated=0)
    time.sleep(1.0)
    end = _now()
    with _refusing_endpoint() as endpoint:
        # Held and sent again for otel_export.retry_for_s (here 1 s), then given up and counted.
        env = {"RAGPULSE_OTEL_EXPORT__ENDPOINT": endpoint, "RAGPULSE_OTEL_EXPORT__RETRY_FOR_S": "1"}
        replay = _replay(kafka_bootstrap, topic, start, end, env)
    assert replay.returncode == 1, replay.stdout + replay.stderr[-3000:]
    lines = replay.stdout.splitlines()
    assert lines[2] == f"  exported {2 * METRICS} results to evaluation spans and log events at {endpoint}", (
        replay.stdout
    )
    assert lines[4].startswith("  not delivered: otlp "), replay.stdout
