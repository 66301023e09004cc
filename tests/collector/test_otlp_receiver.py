"""The embedded OTLP/HTTP receiver, driven by the standard OTLP exporter and by raw requests."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.trace.v1 import trace_pb2

from collector.http.guard import client_key
from collector.receivers.decode import decode, encode_json
from collector.receivers.otlp import OtlpConfig
from collector.receivers.otlp_http import OtlpHttpReceiver
from collector.stages import DeadLetter, Received
from testkit.collector_runner import RunningCollector, wait_for
from testkit.otlp import post_traces
from testkit.process import free_port
from testkit.rag_traces import BUILDERS, RagCase, encode, make_spans, provider


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
    with RunningCollector(**{"otlp.max_body_bytes": 64 * 1024}) as collector:
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
            "collector.commands.cli",
            "run",
            "--otlp-port",
            str(otlp_port),
            "--otlp-grpc-port",
            "0",
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


class RecordedDeadLetters:
    """A DeadLetterSink that keeps (reason, detail, source) for the test to read."""

    delivering = True

    def __init__(self) -> None:
        self.letters: list[tuple[str, str, str]] = []

    def write(self, letter: DeadLetter, on_written: Callable[[], None]) -> None:
        self.letters.append((letter.reason, letter.detail, letter.source))
        on_written()

    def close(self, timeout_s: float = 10.0) -> None:
        pass


def _post_chunked(port: int, chunks: list[bytes], path: str = "/v1/traces") -> tuple[int, bytes]:
    """POST with `Transfer-Encoding: chunked` and no Content-Length, as streaming clients send."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST",
            path,
            body=iter(chunks),
            headers={"Content-Type": "application/x-protobuf"},
            encode_chunked=True,
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _raw_status(port: int, head: bytes) -> int:
    """Send a hand-written request head (what http.client refuses to write) and read the status."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        status_line = sock.makefile("rb").readline()
    return int(status_line.split()[1])


def test_chunked_body_reaches_records_and_is_bounded_while_read() -> None:
    with RunningCollector(**{"otlp.max_body_bytes": 64 * 1024}) as collector:
        port = collector.service.receiver.port
        body = encode(make_spans("openinference", RagCase(query="chunked question")))
        pieces = [body[i : i + 700] for i in range(0, len(body), 700)]
        assert len(pieces) > 1
        assert _post_chunked(port, pieces) == (200, b"")
        wait_for(lambda: len(collector.records) >= 1, 30, "the chunked trace's record")
        assert collector.records[0]["query"] == "chunked question"
        over = [b"\x0a" * 16 * 1024] * 5  # 80 KiB in chunks, never announced
        status, answer = _post_chunked(port, over)
        assert status == 413 and Status.FromString(answer).code == 8
        assert _post_chunked(port, pieces)[0] == 200  # the server goes on


def test_malformed_content_length_is_400() -> None:
    receiver = OtlpHttpReceiver(OtlpConfig(port=0), RecordedDeadLetters())
    receiver.start(lambda received: None)
    try:
        for value in (b"-1", b"abc", b"1, 2"):
            head = (
                b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\n"
                b"Content-Length: " + value + b"\r\n\r\n"
            )
            assert _raw_status(receiver.port, head) == 400, value
    finally:
        receiver.shutdown()


def _with_bad_ids(body: bytes) -> trace_pb2.TracesData:
    """The trace plus two spans that cannot be assembled: a 3-byte trace id, an all-zero span id."""
    traces = decode(body)
    spans = traces.resource_spans[0].scope_spans[0].spans
    spans.add(trace_id=b"\x01\x02\x03", span_id=b"\x01" * 8, name="short trace id")
    spans.add(trace_id=b"\x02" * 16, span_id=b"\x00" * 8, name="zero span id")
    return traces


def test_partial_success_for_spans_with_invalid_ids() -> None:
    batches: list[Received] = []
    receiver = OtlpHttpReceiver(OtlpConfig(port=0), RecordedDeadLetters())
    receiver.start(batches.append)
    try:
        traces = _with_bad_ids(encode(make_spans("ragpulse")))
        status, body = post_traces(receiver.port, traces.SerializeToString())
        assert status == 200
        partial = ExportTraceServiceResponse.FromString(body).partial_success
        assert partial.rejected_spans == 2 and "invalid trace or span id" in partial.error_message
        status, body = post_traces(receiver.port, encode_json(traces), "application/json")
        assert status == 200
        assert json.loads(body)["partialSuccess"]["rejectedSpans"] in ("2", 2)
    finally:
        receiver.shutdown()
    assert [len(b.spans) for b in batches] == [1, 1]  # the valid span of each request went on


def test_unexpected_error_is_500_dead_lettered_and_the_server_goes_on() -> None:
    dead_letters = RecordedDeadLetters()
    calls: list[Received] = []

    def deliver(received: Received) -> None:
        calls.append(received)
        if len(calls) == 1:
            raise RuntimeError("pipeline went away")

    receiver = OtlpHttpReceiver(OtlpConfig(port=0), dead_letters)
    receiver.start(deliver)
    try:
        body = encode(make_spans("ragpulse"))
        status, answer = post_traces(receiver.port, body)
        assert status == 500 and Status.FromString(answer).code == 13
        assert dead_letters.letters == [("internal_error", "RuntimeError: pipeline went away", "otlp")]
        assert post_traces(receiver.port, body)[0] == 200
        receiver.stop()
        assert post_traces(receiver.port, body)[0] == 503
    finally:
        receiver.shutdown()
    assert len(calls) == 2


def test_other_paths_and_methods() -> None:
    receiver = OtlpHttpReceiver(OtlpConfig(port=0), RecordedDeadLetters())
    receiver.start(lambda received: None)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", receiver.port, timeout=10)
        connection.request("GET", "/v1/logs")
        response = connection.getresponse()
        assert (response.status, bool(response.read())) == (405, True)
        connection.request("POST", "/v1/profiles", body=b"", headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        assert (response.status, bool(response.read())) == (404, True)
        connection.close()
    finally:
        receiver.shutdown()


def test_connection_share_per_client() -> None:
    """A quarter of `max_connections` (at least 16, at most all) unless set; an IPv6 client is its /64."""
    assert OtlpConfig().connections_per_client == 250
    assert OtlpConfig(max_connections=40).connections_per_client == 16
    assert OtlpConfig(max_connections=10).connections_per_client == 10
    assert OtlpConfig(max_connections_per_client=5).connections_per_client == 5
    assert client_key(("127.0.0.2", 5000)) == "127.0.0.2"
    assert client_key(("::ffff:10.0.0.7", 5000)) == "10.0.0.7"
    assert client_key(("2001:db8::1", 1)) == client_key(("2001:db8::2", 2)) == "2001:db8::/64"
