"""The embedded OTLP/HTTP receiver: `POST /v1/traces` with protobuf or JSON, optionally gzip.

Status codes follow the OTLP/HTTP spec: 200 with an (empty) ExportTraceServiceResponse in the
request's encoding, 400 for a body that cannot be decoded (not retryable), 413 over the size
limit, 415 for other content types, 405/404 for other methods/paths, 503 while shutting down.
"""

from __future__ import annotations

import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from pydantic import BaseModel, Field

from collector.deadletter import DeadLetterSink
from collector.decode import DecodeError, Encoding, decode, decompress
from collector.metrics import SPANS_RECEIVED
from collector.offsets import NoAck
from collector.receivers import Deliver, Received
from collector.spans import flatten

logger = logging.getLogger(__name__)

_CONTENT_TYPES = {"application/x-protobuf": Encoding.OTLP_PROTO, "application/json": Encoding.OTLP_JSON}


class OtlpHttpConfig(BaseModel):
    host: str = Field("127.0.0.1", description="Listen address; 0.0.0.0 to accept from other hosts.")
    port: int = Field(4318, ge=0, le=65535)
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024, description="Compressed and decompressed.")


class OtlpHttpReceiver:
    name = "otlp"

    def __init__(self, config: OtlpHttpConfig, dead_letters: DeadLetterSink) -> None:
        self.config = config
        self._dead_letters = dead_letters
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._accepting = False

    @property
    def port(self) -> int:
        return self._server.server_address[1] if self._server else self.config.port

    @property
    def ready(self) -> bool:
        return self._accepting

    def start(self, deliver: Deliver) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                status, body, content_type = receiver._handle(self, deliver)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                logger.debug("otlp: " + format, *args)

        self._server = ThreadingHTTPServer((self.config.host, self.config.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-http", daemon=True)
        self._thread.start()
        self._accepting = True
        logger.info("OTLP/HTTP receiver on http://%s:%d/v1/traces", self.config.host, self.port)

    def _handle(self, request: BaseHTTPRequestHandler, deliver: Deliver) -> tuple[int, bytes, str]:
        if request.path.split("?")[0] != "/v1/traces":
            return HTTPStatus.NOT_FOUND, b"not found: POST /v1/traces", "text/plain"
        if not self._accepting:
            return HTTPStatus.SERVICE_UNAVAILABLE, b"shutting down", "text/plain"
        media_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        encoding = _CONTENT_TYPES.get(media_type)
        if encoding is None:
            return (
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                b"use application/x-protobuf or application/json",
                "text/plain",
            )
        length = int(request.headers.get("Content-Length") or 0)
        limit = self.config.max_body_bytes
        if length > limit:
            request.close_connection = True  # do not read an oversized body
            return HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes".encode(), "text/plain"
        raw = request.rfile.read(length)
        try:
            traces = decode(decompress(raw, request.headers.get("Content-Encoding"), limit), encoding, limit)
        except DecodeError as exc:
            self._dead_letters.write(exc.reason, exc.detail, raw, source="otlp")
            status = (
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE if exc.reason == "too_large" else HTTPStatus.BAD_REQUEST
            )
            return status, str(exc).encode(), "text/plain"
        spans = flatten(traces)
        SPANS_RECEIVED.labels("otlp").inc(len(spans))
        if spans:
            deliver(Received(spans=spans, ack=NoAck(), source="otlp"))
        if encoding is Encoding.OTLP_JSON:
            return HTTPStatus.OK, b"{}", "application/json"
        return HTTPStatus.OK, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf"

    def stop(self) -> None:
        """Answer 503 from now on, so exporters retry against another replica or later."""
        self._accepting = False

    def shutdown(self, timeout_s: float = 10.0) -> None:
        self._accepting = False
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout_s)
