"""The embedded OTLP/HTTP receiver, driven by the standard OTLP exporter and by raw requests."""

from __future__ import annotations

import gzip
import http.client
import os
import signal
import subprocess
import sys
import time

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from collector.decode import decode, encode_json
from tests.support.collector_runner import RunningCollector, wait_for
from tests.support.otlp import post_traces
from tests.support.process import free_port
from tests.support.rag_traces import BUILDERS, RagCase, encode, make_spans, provider


def test_standard_otlp_exporter_with_gzip_reaches_records() -> None:
    with RunningCollector() as collector:
        port = collector.service.receiver.port
        exporter = OTLPSpanExporter(
            endpoint=f"http://127.0.0.1:{port}/v1/traces", compression=Compression.Gzip
        )
        tp = provider(exporter)
        for convention, build in BUILDERS.items():
            build(tp, RagCase(query=f"otlp {convention}"))
        wait_for(lambda: len(collector.records) >= 4, 30, "four records")
    assert sorted(r["convention"] for r in collector.records) == sorted(BUILDERS)


def test_json_protobuf_and_error_status_codes() -> None:
    with RunningCollector(otlp_max_body_bytes=64 * 1024) as collector:
        port = collector.service.receiver.port
        proto = encode(make_spans("ragpulse"))
        assert post_traces(port, proto, "application/x-protobuf")[0] == 200
        status, body = post_traces(
            port, encode_json(decode(encode(make_spans("gen_ai")))), "application/json"
        )
        assert (status, body) == (200, b"{}")
        assert (
            post_traces(
                port, gzip.compress(encode(make_spans("openllmetry"))), "application/x-protobuf", "gzip"
            )[0]
            == 200
        )
        assert post_traces(port, b"\x0a\xff\xff\xff\xff\x0f", "application/x-protobuf")[0] == 400
        assert post_traces(port, b'{"resourceSpans": [', "application/json")[0] == 400
        assert post_traces(port, b"x" * (65 * 1024), "application/x-protobuf")[0] == 413
        bomb = gzip.compress(b"\x0a" * (10 * 1024 * 1024))  # small on the wire, huge inflated
        assert post_traces(port, bomb, "application/x-protobuf", "gzip")[0] == 413
        assert post_traces(port, proto, "text/plain")[0] == 415
        wait_for(lambda: len(collector.records) >= 3, 30, "three good records")


def test_ragpulse_run_logs_records_and_serves_metrics() -> None:
    """The user's view: `ragpulse run` on the embedded receiver, spans in, a log line out, /metrics up."""
    otlp_port, metrics_port = free_port(), free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "collector.cli",
            "run",
            "--otlp-port",
            str(otlp_port),
            "--metrics-port",
            str(metrics_port),
            "--quiet-period",
            "0.2",
            "--log-records",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if (
                    post_traces(otlp_port, encode(make_spans("openinference")), "application/x-protobuf")[0]
                    == 200
                ):
                    break
            except OSError:
                time.sleep(0.2)
        line = ""
        while "rag_record" not in line and time.monotonic() < deadline:
            line = process.stderr.readline()
        assert '"convention": "openinference"' in line
        connection = http.client.HTTPConnection("127.0.0.1", metrics_port, timeout=10)
        connection.request("GET", "/metrics")
        metrics = connection.getresponse().read().decode()
        assert 'ragpulse_spans_received_total{source="otlp"}' in metrics
        assert 'ragpulse_traces_total{state="extracted"}' in metrics
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
