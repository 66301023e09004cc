"""An ASGI app served by uvicorn on its own thread and event loop: the one way ragpulse serves HTTP.

Both HTTP endpoints (the OTLP/HTTP receiver and the status server) are started and stopped by the
pipeline's synchronous lifecycle while the pipeline owns the main asyncio loop, so each server gets
a thread with a loop of its own. Three choices matter:

- The socket is bound here, before the thread starts, so `start()` raises a taken port in the
  caller's thread (uvicorn would `sys.exit` inside its thread) and `port` is known on return.
- uvicorn never touches signal handlers: SIGTERM/SIGINT belong to `collector.pipeline.service`, which stops
  the pipeline gracefully; a server that reacted by itself would stop taking spans too early.
- uvicorn's own logging configuration is not applied (`log_config=None`): the process configures
  logging once, and access logs would be a line per OTLP export.

Slow and hostile clients are bounded by `collector.http.guard`: a connection is admitted or refused
as it opens (`max_connections` in all, `max_connections_per_client` from one address; a refused one
gets a retryable 503 and holds no slot), and an admitted one whose request headers have not all
arrived `header_timeout_s` after it opened (or after its previous response) is closed. Body
timeouts are the app's (the OTLP receiver answers 408).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp

from collector.http.guard import Admission, GuardedH11

logger = logging.getLogger(__name__)

_STARTUP_TIMEOUT_S = 10.0


class _Server(uvicorn.Server):
    """uvicorn (>= 0.29) installs SIGINT/SIGTERM handlers in `capture_signals`; ours does nothing."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class PortUnavailable(OSError):
    """A port that cannot be bound; the message is one line naming the port and the setting that moves it."""

    def __init__(self, what: str, host: str, port: int, setting: str, cause: object) -> None:
        reason = getattr(cause, "strerror", None) or str(cause)
        super().__init__(
            f"cannot listen on {host}:{port} for {what} ({reason}); choose another port with {setting}"
        )


class HttpServer:
    def __init__(
        self,
        app: ASGIApp,
        host: str,
        port: int,
        name: str,
        setting: str,
        header_timeout_s: float = 30.0,
        max_connections: int = 1000,
        max_connections_per_client: int | None = None,
        receiver: str = "",
    ) -> None:
        """`setting`: how a user moves this port (named when it is taken); `receiver`: the label its
        refusals are counted under in `ragpulse_receiver_rejected_total` ("" = not counted)."""
        self.host, self.name, self.setting = host, name, setting
        self._port = port
        attributes = {
            "header_timeout_s": header_timeout_s,
            "admission": Admission(name, max_connections, max_connections_per_client),
            "receiver": receiver,
        }
        protocol = type("GuardedH11", (GuardedH11,), attributes)
        self._config = uvicorn.Config(
            app,
            http=protocol,  # h11: pure Python and always installed with uvicorn, the same parser everywhere
            limit_concurrency=None,  # admission is GuardedH11's, at connect time
            ws="none",
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
        )
        self._server = _Server(self._config)
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._failure: BaseException | None = None
        uvicorn_logger = logging.getLogger("uvicorn.error")
        if uvicorn_logger.level == logging.NOTSET:  # its start/stop lines would repeat ours
            uvicorn_logger.setLevel(logging.WARNING)

    @property
    def port(self) -> int:
        """The bound port once started (the ephemeral one for port 0), else the configured one."""
        return self._port

    @property
    def alive(self) -> bool:
        """Serving, or not started yet, or shut down on purpose: False only if its thread died."""
        return self._thread is None or self._thread.is_alive() or self._stopped

    def start(self) -> None:
        """Bind, serve from a new thread, and return once uvicorn accepts connections."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            self._socket = socket.create_server((self.host, self._port), family=family)
        except OSError as exc:
            raise PortUnavailable(self.name, self.host, self._port, self.setting, exc) from None
        self._port = self._socket.getsockname()[1]
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.shutdown(1.0)
                self._socket.close()
                raise RuntimeError(f"{self.name} did not start on {self.host}:{self.port}: {self._failure!r}")
            time.sleep(0.005)

    def _run(self) -> None:
        assert self._socket is not None
        try:
            asyncio.run(self._server.serve(sockets=[self._socket]))
        except BaseException as exc:  # SystemExit included: uvicorn exits on startup failures
            self._failure = exc
            logger.error("%s stopped: %r", self.name, exc)

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Stop accepting, let requests in progress finish within `timeout_s`, then cut them off."""
        if self._thread is None:
            return
        self._stopped = True
        self._config.timeout_graceful_shutdown = max(1, int(timeout_s * 0.8))  # read at shutdown time
        self._server.should_exit = True
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(2.0)
        if self._thread.is_alive():
            logger.warning("%s did not stop within %.1fs", self.name, timeout_s)
        self._thread = None
