"""The embedded OTLP/HTTP receiver: `POST /v1/traces` and `POST /v1/logs`, as the Collector's (and
`POST /v1/metrics`, answered and dropped: `otlp_metrics`).

Protobuf or JSON, gzip or deflate, with a Content-Length or chunked: the body is read as a stream
and the size limit enforced while reading, so a chunked request is neither dropped nor unbounded.
Answers follow the OTLP/HTTP spec: 200 with an Export*ServiceResponse in the request's encoding
(`partial_success` filled when items were rejected), 400 for a body that cannot be decoded or a
malformed Content-Length (not retryable; the body is dead-lettered), 408 for a body not sent within
`otlp.request_timeout_s`, 413 over the size limit, 415 for other content types, 404/405 for other
paths/methods, 500 for a bug of ours (dead-lettered), 503 while stopping or over
`otlp.max_connections` / `otlp.max_connections_per_client` (retryable). Error bodies are a
`google.rpc.Status` in the request's encoding. Every 400/408/413/415/503 moves
`ragpulse_receiver_rejected_total{receiver="otlp",reason}` (`collector.http.guard` counts the
connection-level ones), so a flood or a broken exporter shows on /metrics, not only in its own logs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import get_args

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from collector.http.server import HttpServer
from collector.metrics import RECEIVER_REJECTED, RejectReason
from collector.receivers.decode import DecodeError, Encoding
from collector.receivers.forward import OtlpForwarder
from collector.receivers.otlp import (
    ExportResult,
    OtlpConfig,
    OtlpReceiver,
    RequestOutcome,
    Signal,
    count_rejected,
    serialize,
)
from collector.receivers.otlp_metrics import drop_metrics
from collector.stages import DeadLetterSink, Deliver

logger = logging.getLogger(__name__)

_CONTENT_TYPES = {"application/x-protobuf": Encoding.OTLP_PROTO, "application/json": Encoding.OTLP_JSON}
_MEDIA_TYPES = {encoding: media for media, encoding in _CONTENT_TYPES.items()}
_HTTP_STATUS = {
    RequestOutcome.ACCEPTED: 200,
    RequestOutcome.INVALID: 400,
    RequestOutcome.TOO_LARGE: 413,
    RequestOutcome.TIMEOUT: 408,
    RequestOutcome.INTERNAL: 500,
    RequestOutcome.UNAVAILABLE: 503,
}


class OtlpHttpReceiver(OtlpReceiver):
    name = "otlp"

    def __init__(
        self, config: OtlpConfig, dead_letters: DeadLetterSink, forwarder: OtlpForwarder | None = None
    ) -> None:
        super().__init__(config, dead_letters, forwarder)
        routes = [
            Route("/v1/traces", self._endpoint(Signal.TRACES), methods=["POST"]),
            Route("/v1/logs", self._endpoint(Signal.LOGS), methods=["POST"]),
            Route("/v1/metrics", self._endpoint(None), methods=["POST"]),  # answered, dropped, counted
        ]
        self._server = HttpServer(
            Starlette(routes=routes),
            config.host,
            config.port,
            name="OTLP/HTTP",
            setting="--otlp-port (RAGPULSE_OTLP__PORT)",
            header_timeout_s=config.request_timeout_s,
            max_connections=config.max_connections,
            max_connections_per_client=config.connections_per_client,
            receiver=self.name,
        )
        for reason in get_args(RejectReason):  # every series from the start: rate() needs a zero
            RECEIVER_REJECTED.labels(self.name, reason)

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def alive(self) -> bool:
        return self._server.alive

    def start(self, deliver: Deliver) -> None:
        self._deliver = deliver
        self._accepting = True  # before the socket is bound: a request that gets in is taken, not 503
        try:
            self._server.start()
        except BaseException:
            self._accepting = False
            raise
        logger.info("OTLP/HTTP receiver on http://%s:%d (/v1/traces, /v1/logs)", self.config.host, self.port)

    def _endpoint(self, signal: Signal | None) -> Callable[[Request], Awaitable[Response]]:
        """`signal` None: OTLP metrics (`otlp_metrics`)."""

        async def export(request: Request) -> Response:
            return await self._export(signal, request)

        return export

    async def _export(self, signal: Signal | None, request: Request) -> Response:
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        encoding = _CONTENT_TYPES.get(media_type)
        if not self._accepting or self._deliver is None:
            return _error(ExportResult(RequestOutcome.UNAVAILABLE, message="shutting down"), encoding)
        if encoding is None:
            RECEIVER_REJECTED.labels(self.name, "bad_content_type").inc()
            return PlainTextResponse("use application/x-protobuf or application/json", 415)
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and not declared.strip().isdigit():
            message = f"bad Content-Length {declared!r}"
            return _error(ExportResult(RequestOutcome.INVALID, message=message), encoding, "bad_framing")
        if declared is not None and int(declared) > limit:
            return _error(
                ExportResult(RequestOutcome.TOO_LARGE, message=f"body over {limit} bytes"), encoding
            )
        try:
            async with asyncio.timeout(self.config.request_timeout_s):
                body = await _read_body(request, limit)
        except ClientDisconnect:  # not counted: nobody reads this, and h11 counted any bad framing
            return PlainTextResponse("client disconnected", 400)
        except TimeoutError:
            message = f"body not received within {self.config.request_timeout_s:g}s"
            return _error(ExportResult(RequestOutcome.TIMEOUT, message=message), encoding)
        if body is None:
            return _error(
                ExportResult(RequestOutcome.TOO_LARGE, message=f"body over {limit} bytes"), encoding
            )
        if signal is None:
            content_encoding = request.headers.get("content-encoding")
            return await run_in_threadpool(self._drop_metrics, body, encoding, content_encoding)
        result = await run_in_threadpool(
            self._intake.export,
            signal,
            body,
            encoding,
            self._deliver,
            request.headers.get("content-encoding"),
        )
        if result.outcome is not RequestOutcome.ACCEPTED:
            return _error(result, encoding)
        return Response(serialize(result.response(signal), encoding), 200, media_type=_MEDIA_TYPES[encoding])

    def _drop_metrics(self, body: bytes, encoding: Encoding, content_encoding: str | None) -> Response:
        try:
            reply = drop_metrics(self.name, body, encoding, self.config.max_body_bytes, content_encoding)
        except DecodeError as exc:
            outcome = RequestOutcome.TOO_LARGE if exc.reason == "too_large" else RequestOutcome.INVALID
            return _error(ExportResult(outcome, message=str(exc)), encoding)
        return Response(serialize(reply, encoding), 200, media_type=_MEDIA_TYPES[encoding])

    def stop(self) -> None:
        """Answer 503 from now on, so exporters retry against another replica or later."""
        self._accepting = False

    def shutdown(self, timeout_s: float = 10.0) -> None:
        self._accepting = False
        self._server.shutdown(timeout_s)


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The whole body (Content-Length or chunked), or None as soon as it grows past `limit`."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _error(result: ExportResult, encoding: Encoding | None, reason: RejectReason | None = None) -> Response:
    """The error answer, counted (under `reason`, else the one its outcome implies)."""
    if reason is not None:
        RECEIVER_REJECTED.labels(OtlpHttpReceiver.name, reason).inc()
    else:
        count_rejected(OtlpHttpReceiver.name, result.outcome)
    status = _HTTP_STATUS[result.outcome]
    if encoding is None:
        return PlainTextResponse(result.message, status)
    return Response(serialize(result.status(), encoding), status, media_type=_MEDIA_TYPES[encoding])
