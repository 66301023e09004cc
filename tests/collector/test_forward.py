"""Forwarding (`otlp.forward`): what the app sends to ragpulse goes on to the app's tracing backend.

`ragpulse run` runs as a subprocess; the app's side is the OpenTelemetry SDK's own OTLP exporters
(HTTP plain and gzip, gRPC), the backend a real OTLP/HTTP endpoint (`OtlpSink`) that is switched to
fail the ways backends do: 503 for a while, no answer at all, a 400.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from pydantic import SecretStr, ValidationError

from collector.assembly.assembler import AssemblyConfig, TraceAssembler
from collector.config import load_settings
from collector.metrics import REGISTRY
from collector.pipeline.deadletter import LogDeadLetters
from collector.pipeline.pipeline import Pipeline
from collector.pipeline.service import build_receivers
from collector.receivers.decode import Signal
from collector.receivers.forward import ForwardConfig, OtlpForwarder
from testkit.collector_runner import wait_for
from testkit.genai_logs import chat_with_message_logs
from testkit.otlp_sink import OtlpSink, SinkMode
from testkit.process import RagpulseProcess, free_port, http_status
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.scrape import scrape

SECRET = "Bearer forward-secret-7f3a"
PROTOBUF = "application/x-protobuf"


@dataclass
class Sidecar:
    """`ragpulse run` forwarding to `sink`, and exporters of the app pointed at it."""

    process: RagpulseProcess
    sink: OtlpSink
    grpc_port: int

    def http(self, gzip: bool = False) -> HttpSpanExporter:
        compression = Compression.Gzip if gzip else Compression.NoCompression
        url = f"http://127.0.0.1:{self.process.otlp_port}/v1/traces"
        return HttpSpanExporter(endpoint=url, compression=compression)

    def grpc(self) -> GrpcSpanExporter:
        return GrpcSpanExporter(endpoint=f"127.0.0.1:{self.grpc_port}", insecure=True)

    def metric(self, name: str, **labels: str) -> float:
        return scrape(self.process.metrics_port).value(name, **labels)

    def forwarded(self, outcome: str) -> float:
        return self.metric("ragpulse_forwarded_total", signal="traces", outcome=outcome)


@contextmanager
def sidecar(sink: OtlpSink, **settings: str) -> Iterator[Sidecar]:
    grpc_port = free_port()
    env = {
        "RAGPULSE_OTLP__FORWARD__ENDPOINT": f"http://127.0.0.1:{sink.port}",
        "RAGPULSE_OTLP__FORWARD__HEADERS": json.dumps({"authorization": SECRET}),
        **{f"RAGPULSE_OTLP__FORWARD__{key.upper()}": value for key, value in settings.items()},
    }
    args = ("--otlp-grpc-port", str(grpc_port), "--quiet-period", "0.3")  # the last port flag wins
    with RagpulseProcess(*args, env=env) as process:
        yield Sidecar(process, sink, grpc_port)
    assert SECRET not in process.output()


@pytest.fixture(scope="module")
def forwarding() -> Iterator[Sidecar]:
    with OtlpSink() as sink, sidecar(sink) as app:
        yield app


@pytest.fixture
def app(forwarding: Sidecar) -> Iterator[Sidecar]:
    """The module's sidecar, its sink answering normally again after each test."""
    forwarding.sink.set_mode(SinkMode.OK)
    try:
        yield forwarding
    finally:
        forwarding.sink.set_mode(SinkMode.OK)


def requests(count: int, label: str) -> list[list[ReadableSpan]]:
    """`count` app requests' worth of RAG spans, one trace each."""
    return [make_spans("openinference", RagCase(query=f"{label} {i}")) for i in range(count)]


def export(exporter: SpanExporter, batches: Sequence[Sequence[ReadableSpan]]) -> None:
    for spans in batches:
        assert exporter.export(spans) is SpanExportResult.SUCCESS  # ragpulse accepted it


def ids(spans: Sequence[ReadableSpan]) -> set[tuple[str, str]]:
    return {(f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}") for s in spans}


def wait_at_sink(sink: OtlpSink, spans: Sequence[ReadableSpan], timeout_s: float = 30) -> None:
    wanted = ids(spans)
    arrived = sink.wait_for(lambda: wanted <= {(s.trace_id, s.span_id) for s in sink.spans}, timeout_s)
    assert arrived, f"{len(wanted - {(s.trace_id, s.span_id) for s in sink.spans})} spans did not arrive"


def headers_of(sink: OtlpSink, trace_id: int) -> dict[str, str]:
    """The headers of the request that brought this trace to the sink."""
    for path, body, headers in list(sink.bodies):
        request = ExportTraceServiceRequest.FromString(body) if path == "/v1/traces" else None
        if request and any(
            span.trace_id == trace_id.to_bytes(16, "big")
            for rs in request.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ):
            return {name.lower(): value for name, value in headers.items()}
    raise AssertionError(f"no request with trace {trace_id:032x}")


def test_every_span_reaches_the_backend_over_http_gzip_and_grpc_and_is_still_evaluated(app: Sidecar) -> None:
    before_sent = app.forwarded("sent")
    before_evaluated = app.metric("ragpulse_evaluations_total", metric="faithfulness")
    sent = {
        transport: requests(1, f"forwarded over {transport}")[0] for transport in ("http", "gzip", "grpc")
    }
    export(app.http(), [sent["http"]])
    export(app.http(gzip=True), [sent["gzip"]])
    export(app.grpc(), [sent["grpc"]])
    everything = [span for spans in sent.values() for span in spans]
    wait_at_sink(app.sink, everything)
    arrived = {(s.trace_id, s.span_id): s for s in app.sink.spans}
    for span in everything:
        (key,) = ids([span])
        assert arrived[key].name == span.name
        assert arrived[key].attributes == dict(span.attributes or {})
    # as received: the gzip body still gzipped, gRPC's as protobuf; the configured header on each
    expected_encoding = {"http": None, "gzip": "gzip", "grpc": None}
    for transport, spans in sent.items():
        headers = headers_of(app.sink, spans[0].context.trace_id)
        assert headers["content-type"] == PROTOBUF and headers["authorization"] == SECRET
        assert headers.get("content-encoding") == expected_encoding[transport], transport
    wait_for(lambda: app.forwarded("sent") - before_sent == 3, 30, "3 requests counted sent")
    metrics = scrape(app.process.metrics_port)
    assert metrics.value("ragpulse_spans_received_total", source="otlp") >= 2 * len(sent["http"])
    assert metrics.value("ragpulse_spans_received_total", source="otlp_grpc") >= len(sent["grpc"])
    wait_for(
        lambda: app.metric("ragpulse_evaluations_total", metric="faithfulness") - before_evaluated >= 3,
        60,
        "the 3 forwarded traces evaluated",
    )


def test_log_records_go_on_to_v1_logs(app: Sidecar) -> None:
    """Three log requests (two message events of a chat span, one without trace context, which
    ragpulse does not use but the backend still gets)."""
    sent_before = app.metric("ragpulse_forwarded_total", signal="logs", outcome="sent")
    records_before = app.sink.log_records
    url = f"http://127.0.0.1:{app.process.otlp_port}"
    chat_with_message_logs(
        HttpSpanExporter(endpoint=f"{url}/v1/traces"), HttpLogExporter(endpoint=f"{url}/v1/logs")
    )
    wait_for(lambda: app.sink.log_records - records_before == 3, 30, "3 log records at the backend")
    wait_for(
        lambda: app.metric("ragpulse_forwarded_total", signal="logs", outcome="sent") - sent_before == 3,
        30,
        "3 log requests counted sent",
    )


def test_a_backend_answering_503_for_a_while_loses_nothing(app: Sidecar) -> None:
    before = {outcome: app.forwarded(outcome) for outcome in ("sent", "rejected", "dropped")}
    unavailable_before = app.sink.requests["503"]
    batches = requests(5, "while the backend is unavailable")
    app.sink.set_mode(SinkMode.UNAVAILABLE)
    export(app.http(), batches)
    # the backend says 503 (Retry-After: 1) three times to the first request, then takes requests again
    wait_for(lambda: app.sink.requests["503"] - unavailable_before >= 3, 30, "three 503s")
    app.sink.set_mode(SinkMode.OK)
    wait_at_sink(app.sink, [span for spans in batches for span in spans])
    wait_for(lambda: app.forwarded("sent") - before["sent"] == len(batches), 30, "every request sent")
    assert app.forwarded("dropped") == before["dropped"] and app.forwarded("rejected") == before["rejected"]


def test_a_400_from_the_backend_is_rejected_and_not_retried(app: Sidecar) -> None:
    rejected_before, answered_400 = app.forwarded("rejected"), app.sink.requests["400"]
    refused, accepted = requests(2, "rejected by the backend")
    app.sink.set_mode(SinkMode.REJECT)
    export(app.http(), [refused])
    wait_for(lambda: app.forwarded("rejected") - rejected_before == 1, 30, "the request counted rejected")
    app.sink.set_mode(SinkMode.OK)
    export(app.http(), [accepted])  # sent after the refused one: by then it would have been retried
    wait_at_sink(app.sink, accepted)
    assert app.sink.requests["400"] - answered_400 == 1
    assert not ids(refused) & {(s.trace_id, s.span_id) for s in app.sink.spans}


def test_a_backend_that_never_answers_costs_a_bounded_queue_and_nothing_else() -> None:
    """Blackholed with a long timeout, the first request hangs and nothing leaves the queue, so exactly
    the requests over `max_queue_bytes` are dropped at once; once the backend fails fast (503) each
    queued request is dropped after `retry_for_s`. ragpulse takes and evaluates every trace meanwhile."""
    batches = requests(12, "nobody listens")
    sizes = [len(encode(spans)) for spans in batches]  # the exporter sends exactly these bytes
    bound = sum(sizes[:3]) + min(sizes) // 2
    fit = [size for i, size in enumerate(sizes) if sum(sizes[:i]) + size <= bound]
    assert len(fit) == 3
    with OtlpSink(SinkMode.BLACKHOLE) as sink:
        settings = {"timeout_s": "60", "retry_for_s": "2", "max_queue_bytes": str(bound)}
        with sidecar(sink, **settings) as app:
            export(app.http(), batches)
            assert http_status(f"{app.process.metrics_url}/healthz") == 200
            assert app.forwarded("dropped") == len(batches) - len(fit)  # over the bound, at once
            assert sink.requests["hung"] <= 1  # the rest wait behind the first, bounded
            wait_for(
                lambda: app.metric("ragpulse_evaluations_total", metric="faithfulness") >= len(batches),
                60,
                "every trace evaluated while the backend hangs",
            )
            assert app.metric("ragpulse_spans_received_total", source="otlp") == sum(map(len, batches))
            sink.set_mode(SinkMode.UNAVAILABLE)  # the hung request ends; the backend keeps failing
            wait_for(lambda: app.forwarded("dropped") == len(batches), 60, "all dropped after retry_for_s")
            assert app.forwarded("sent") == 0
            assert http_status(f"{app.process.metrics_url}/healthz") == 200
            output = app.process.output()
            assert "queue full" in output and "for retry_for_s (2 s)" in output
            assert "Traceback" not in output


# --- the forwarder in-process -----------------------------------------------------------------------


def forwarded_total(outcome: str) -> float:
    value = REGISTRY.get_sample_value("ragpulse_forwarded_total", {"signal": "traces", "outcome": outcome})
    return value or 0.0


def test_the_queue_is_bounded_in_bytes_and_shutdown_counts_what_is_left() -> None:
    with OtlpSink(SinkMode.BLACKHOLE) as sink:
        config = ForwardConfig(endpoint=f"http://127.0.0.1:{sink.port}", timeout_s=60, max_queue_bytes=10_000)
        forwarder = OtlpForwarder(config)
        dropped = forwarded_total("dropped")
        forwarder.start()
        for _ in range(50):
            forwarder.forward(Signal.TRACES, b"x" * 1000, PROTOBUF, None)
            assert forwarder.queued_bytes <= 10_000
        assert forwarded_total("dropped") - dropped == 40  # the one in flight still counts in the bound
        wait_for(lambda: sink.requests["hung"] == 1, 10, "the first request hanging")
        forwarder.shutdown(timeout_s=0.2)
        assert forwarded_total("dropped") - dropped == 50 and forwarder.queued_bytes == 0
        forwarder.forward(Signal.TRACES, b"x", PROTOBUF, None)  # after shutdown: counted, not kept
        assert forwarded_total("dropped") - dropped == 51 and forwarder.queued_bytes == 0
        assert forwarder.alive and sink.requests["hung"] == 1


def test_an_attempt_that_times_out_is_dropped_after_retry_for_s() -> None:
    with OtlpSink(SinkMode.BLACKHOLE) as sink:
        config = ForwardConfig(endpoint=f"http://127.0.0.1:{sink.port}", timeout_s=0.2, retry_for_s=0.5)
        forwarder = OtlpForwarder(config)
        dropped = forwarded_total("dropped")
        forwarder.start()
        forwarder.forward(Signal.TRACES, encode(make_spans("ragpulse")), PROTOBUF, None)
        wait_for(lambda: forwarded_total("dropped") - dropped == 1, 10, "the request dropped")
        assert forwarder.queued_bytes == 0 and forwarder.alive
        forwarder.shutdown(1)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_dead_forwarder_thread_fails_liveness() -> None:
    """A header httpx cannot send kills the thread (the config check stops it; constructed here without)."""
    config = ForwardConfig.model_construct(
        endpoint="http://127.0.0.1:9", headers={"x-token": SecretStr("café")}, timeout_s=1.0
    )
    forwarder = OtlpForwarder(config)
    pipeline = Pipeline(
        receivers=[forwarder], assembler=TraceAssembler(AssemblyConfig()), dead_letters=LogDeadLetters()
    )
    assert forwarder.alive and pipeline.alive  # not started yet
    forwarder.start()
    wait_for(lambda: not forwarder.alive, 10, "the thread to die")
    assert not pipeline.alive


def test_the_forwarder_is_one_receiver_shared_by_both_and_listed_last() -> None:
    settings = load_settings(None, **{"otlp.forward.endpoint": "http://127.0.0.1:9"})
    receivers = build_receivers(settings, LogDeadLetters())
    assert [r.name for r in receivers] == ["otlp", "otlp_grpc", "otlp_forward"]
    assert all(r._intake._forwarder is receivers[-1] for r in receivers[:2])  # type: ignore[attr-defined]
    assert len(build_receivers(load_settings(None), LogDeadLetters())) == 2  # unset: no forwarder


def test_settings_catch_a_wrong_endpoint_and_never_print_a_header() -> None:
    with pytest.raises(ValidationError, match="base URL"):
        ForwardConfig(endpoint="http://collector:4318/v1/traces")
    with pytest.raises(ValidationError, match="http:// or https://"):
        ForwardConfig(endpoint="collector:4318")
    assert ForwardConfig(endpoint="").endpoint is None
    assert ForwardConfig(endpoint="http://collector:4318/").endpoint == "http://collector:4318"
    with pytest.raises(ValidationError) as bad_header:
        ForwardConfig(headers={"authorization": "Bearer café-secret"})
    assert "café-secret" not in str(bad_header.value)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env["RAGPULSE_OTLP__FORWARD__ENDPOINT"] = "http://otel-collector:4318"
    env["RAGPULSE_OTLP__FORWARD__HEADERS"] = json.dumps({"authorization": SECRET})
    result = subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", "check-config"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert SECRET not in result.stdout + result.stderr
    settings = json.loads(result.stdout.split("effective settings (secrets masked):\n", 1)[1])
    forward = settings["otlp"]["forward"]
    assert forward["endpoint"] == "http://otel-collector:4318" and forward["headers"] == {
        "authorization": "**********"
    }
