"""The embedded OTLP/gRPC receiver: TraceService/Export and LogsService/Export on :4317, as the Collector's
(and MetricsService/Export, answered and dropped: `otlp_metrics`).

Status codes follow the OTLP spec: OK with an Export*ServiceResponse (`partial_success` filled when
items were rejected), INVALID_ARGUMENT for a request that cannot be decoded (dead-lettered; not
retryable), RESOURCE_EXHAUSTED over `max_body_bytes` (grpc enforces it on the received message,
gzip included), UNAVAILABLE while stopping (retryable), INTERNAL for a bug of ours (dead-lettered).

The methods are registered with no request deserializer: grpc would answer a message it cannot
parse with INTERNAL, and the original bytes would be gone; decoding ourselves gives the spec's
INVALID_ARGUMENT and a dead letter holding exactly what the client sent.

Refusals move `ragpulse_receiver_rejected_total{receiver="otlp_grpc",reason}`: bad_body
(INVALID_ARGUMENT), too_large (RESOURCE_EXHAUSTED from our decoder) and shutting_down (UNAVAILABLE).
A message over `max_body_bytes` on the wire is refused by grpc's core before any code of ours runs,
and grpcio has no connection cap to count: neither is in that counter.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import grpc
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from collector.http.server import PortUnavailable
from collector.receivers.decode import DecodeError, Encoding, Signal
from collector.receivers.forward import OtlpForwarder
from collector.receivers.otlp import OtlpConfig, OtlpReceiver, RequestOutcome, count_rejected
from collector.receivers.otlp_metrics import METRICS_SERVICE, drop_metrics
from collector.stages import DeadLetterSink, Deliver

logger = logging.getLogger(__name__)
_SETTING = "--otlp-grpc-port (RAGPULSE_OTLP__GRPC_PORT; -1 turns it off)"

_SERVICES = {
    Signal.TRACES: trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"].full_name,
    Signal.LOGS: logs_service_pb2.DESCRIPTOR.services_by_name["LogsService"].full_name,
}
_CODES = {
    RequestOutcome.INVALID: grpc.StatusCode.INVALID_ARGUMENT,
    RequestOutcome.TOO_LARGE: grpc.StatusCode.RESOURCE_EXHAUSTED,
    RequestOutcome.TIMEOUT: grpc.StatusCode.DEADLINE_EXCEEDED,
    RequestOutcome.INTERNAL: grpc.StatusCode.INTERNAL,
    RequestOutcome.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
}


class OtlpGrpcReceiver(OtlpReceiver):
    """grpc hands the intake the message decompressed: it is forwarded as protobuf without
    Content-Encoding."""

    name = "otlp_grpc"

    def __init__(
        self, config: OtlpConfig, dead_letters: DeadLetterSink, forwarder: OtlpForwarder | None = None
    ) -> None:
        super().__init__(config, dead_letters, forwarder)
        self._server: grpc.Server | None = None
        self._port = config.grpc_port

    @property
    def port(self) -> int:
        return self._port

    @property
    def alive(self) -> bool:
        """grpcio's server threads are its own: a dead one fails the calls, it does not vanish."""
        return True

    def start(self, deliver: Deliver) -> None:
        self._deliver = deliver
        server = grpc.server(
            ThreadPoolExecutor(self.config.grpc_workers, thread_name_prefix="otlp-grpc"),
            handlers=[*(self._service(signal) for signal in Signal), self._metrics_service()],
            options=[
                ("grpc.max_receive_message_length", self.config.max_body_bytes),
                ("grpc.so_reuseport", 0),  # a port already taken must fail, not be shared silently
            ],
        )
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        try:
            port = server.add_insecure_port(f"{host}:{self.config.grpc_port}")
        except RuntimeError as exc:  # recent grpcio raises, older ones return 0
            raise PortUnavailable("OTLP/gRPC", host, self.config.grpc_port, _SETTING, exc) from None
        if port == 0:
            raise PortUnavailable(
                "OTLP/gRPC", host, self.config.grpc_port, _SETTING, "address already in use"
            )
        self._server, self._port, self._accepting = server, port, True  # before the first call can arrive
        server.start()
        logger.info("OTLP/gRPC receiver on %s:%d", self.config.host, port)

    def _service(self, signal: Signal) -> grpc.GenericRpcHandler:
        export = grpc.unary_unary_rpc_method_handler(
            self._handler(signal),
            request_deserializer=None,  # raw bytes: see the module docstring
            response_serializer=lambda message: message.SerializeToString(),
        )
        return grpc.method_handlers_generic_handler(_SERVICES[signal], {"Export": export})

    def _metrics_service(self) -> grpc.GenericRpcHandler:
        """MetricsService/Export: answered with success and dropped, counted (`otlp_metrics`)."""

        def export(request: bytes, context: grpc.ServicerContext) -> Message:
            try:
                return drop_metrics(self.name, request, Encoding.OTLP_PROTO, self.config.max_body_bytes)
            except DecodeError as exc:
                outcome = RequestOutcome.TOO_LARGE if exc.reason == "too_large" else RequestOutcome.INVALID
                count_rejected(self.name, outcome)
                context.abort(_CODES[outcome], str(exc))
                raise  # not reached: abort raises

        handler = grpc.unary_unary_rpc_method_handler(
            export, request_deserializer=None, response_serializer=lambda message: message.SerializeToString()
        )
        return grpc.method_handlers_generic_handler(METRICS_SERVICE, {"Export": handler})

    def _handler(self, signal: Signal) -> Callable[[bytes, grpc.ServicerContext], Message]:
        def export(request: bytes, context: grpc.ServicerContext) -> Message:
            if not self._accepting or self._deliver is None:
                count_rejected(self.name, RequestOutcome.UNAVAILABLE)
                context.abort(grpc.StatusCode.UNAVAILABLE, "shutting down")
            assert self._deliver is not None
            result = self._intake.export(signal, request, Encoding.OTLP_PROTO, self._deliver)
            if result.outcome is not RequestOutcome.ACCEPTED:
                count_rejected(self.name, result.outcome)
                context.abort(_CODES[result.outcome], result.message)
            return result.response(signal)

        return export

    def stop(self) -> None:
        """Answer UNAVAILABLE from now on, so exporters retry against another replica or later."""
        self._accepting = False

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Refuse new calls, let calls in progress finish within `timeout_s`."""
        self._accepting = False
        if self._server is not None:
            self._server.stop(grace=timeout_s).wait(timeout_s)
            self._server = None
