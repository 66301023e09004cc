"""A real OTLP/HTTP endpoint standing in for a tracing backend (Tempo, Jaeger, an OTel Collector):
it decodes every `POST /v1/traces` and `/v1/logs` with the OTLP protobufs and keeps what arrived, and it
can be switched to misbehave the ways a backend does in production (answer 503, hang without an
answer, answer slowly), so tests and the soak benchmark can check what ragpulse does then."""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class SinkMode(StrEnum):
    OK = "ok"
    UNAVAILABLE = "unavailable"  # 503 with Retry-After: 1, what a backend under load answers
    BLACKHOLE = "blackhole"  # reads the request, never answers (until the mode changes)
    SLOW = "slow"  # answers 200 after `slow_s`
    REJECT = "reject"  # 400, a request the backend will never take: not to be retried


@dataclass(frozen=True, slots=True)
class SinkSpan:
    trace_id: str
    span_id: str
    name: str
    attributes: dict[str, object]


class OtlpSink:
    """`with OtlpSink() as sink:` serves on 127.0.0.1:`sink.port`; `sink.traces_url` is the exporter URL."""

    def __init__(self, mode: SinkMode = SinkMode.OK, slow_s: float = 5.0) -> None:
        self.mode, self.slow_s = mode, slow_s
        self.spans: list[SinkSpan] = []
        self.log_records = 0
        self.requests: Counter[str] = Counter()  # answers given: "200", "503", "400", "hung"
        self.bodies: list[tuple[str, bytes, dict[str, str]]] = []  # (path, decompressed body, headers)
        self._changed = threading.Condition()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-sink", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def traces_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def set_mode(self, mode: SinkMode) -> None:
        with self._changed:
            self.mode = mode
            self._changed.notify_all()

    def trace_ids(self, span_name_prefix: str = "") -> Counter[str]:
        """How many spans arrived per trace id (only spans whose name starts with the prefix)."""
        with self._changed:
            return Counter(s.trace_id for s in self.spans if s.name.startswith(span_name_prefix))

    def wait_for(self, condition: object, timeout_s: float) -> bool:
        """Wait until `condition()` (called under the sink's lock) is true."""
        with self._changed:
            return self._changed.wait_for(condition, timeout_s)  # type: ignore[arg-type]

    def _received(self, path: str, body: bytes, headers: dict[str, str]) -> None:
        with self._changed:
            self.bodies.append((path, body, headers))
            if path == "/v1/traces":
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            attributes = {kv.key: _value(kv.value) for kv in span.attributes}
                            self.spans.append(
                                SinkSpan(span.trace_id.hex(), span.span_id.hex(), span.name, attributes)
                            )
            else:
                logs = ExportLogsServiceRequest.FromString(body)
                self.log_records += sum(
                    len(scope.log_records) for rl in logs.resource_logs for scope in rl.scope_logs
                )
            self._changed.notify_all()

    def _hold_while_blackholed(self) -> bool:
        """Block while the mode is BLACKHOLE; True if it ended (the request can then be answered)."""
        with self._changed:
            return self._changed.wait_for(lambda: self.mode is not SinkMode.BLACKHOLE or self._closed, 3600)

    _closed = False

    def __enter__(self) -> OtlpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        self._server.shutdown()
        self._server.server_close()


def _value(value: object) -> object:
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    return getattr(value, kind) if kind else None


def _handler_for(sink: OtlpSink) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            mode = sink.mode
            if mode is SinkMode.BLACKHOLE:
                sink.requests["hung"] += 1
                sink._hold_while_blackholed()
                self.close_connection = True
                return  # no answer at all: the client times out
            if mode is SinkMode.UNAVAILABLE:
                sink.requests["503"] += 1
                self._answer(503, b"", {"Retry-After": "1"})
                return
            if mode is SinkMode.REJECT:
                sink.requests["400"] += 1
                self._answer(400, b"", {})
                return
            if mode is SinkMode.SLOW:
                time.sleep(sink.slow_s)
            encoding = (self.headers.get("Content-Encoding") or "").lower()
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            if self.path not in ("/v1/traces", "/v1/logs"):
                self._answer(404, b"", {})
                return
            sink._received(self.path, body, dict(self.headers.items()))
            sink.requests["200"] += 1
            response = (
                ExportTraceServiceResponse() if self.path == "/v1/traces" else ExportLogsServiceResponse()
            )
            self._answer(200, response.SerializeToString(), {"Content-Type": "application/x-protobuf"})

        def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
