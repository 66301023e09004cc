"""The OTel Collector's Kafka path in miniature: OTLP/HTTP in, `otlp_proto` records keyed by trace id out.

What the Collector does with `exporters: kafka: {encoding: otlp_proto, partition_traces_by_id: true}`:
each request is split into one `ExportTraceServiceRequest` per trace, keeping its resource and scope
structure, and produced keyed by the trace id, so a trace's spans land on one partition. Test-only:
ragpulse's own receivers are what it tests, not this.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kafka import KafkaProducer
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def split_by_trace(request: ExportTraceServiceRequest) -> dict[bytes, ExportTraceServiceRequest]:
    out: dict[bytes, ExportTraceServiceRequest] = defaultdict(ExportTraceServiceRequest)
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                part = out[span.trace_id]
                if not part.resource_spans or part.resource_spans[-1].resource != resource_spans.resource:
                    target = part.resource_spans.add()
                    target.resource.CopyFrom(resource_spans.resource)
                    target.schema_url = resource_spans.schema_url
                target = part.resource_spans[-1]
                if not target.scope_spans or target.scope_spans[-1].scope != scope_spans.scope:
                    scope = target.scope_spans.add()
                    scope.scope.CopyFrom(scope_spans.scope)
                    scope.schema_url = scope_spans.schema_url
                target.scope_spans[-1].spans.append(span)
    return dict(out)


class KafkaForwarder:
    """POST /v1/traces (protobuf) -> Kafka topic; answers like a Collector's OTLP receiver."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic, self.records = topic, 0
        self._producer = KafkaProducer(bootstrap_servers=bootstrap)
        forwarder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = 200 if self.path == "/v1/traces" else 404
                if status == 200:
                    forwarder.forward(ExportTraceServiceRequest.FromString(body))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def forward(self, request: ExportTraceServiceRequest) -> None:
        for trace_id, part in split_by_trace(request).items():
            self._producer.send(self.topic, key=trace_id.hex().encode(), value=part.SerializeToString())
            self.records += 1
        self._producer.flush(10)

    def __enter__(self) -> KafkaForwarder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._producer.close(5)
