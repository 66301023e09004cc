"""Admission and deadlines for each HTTP connection: what stops a slow or greedy client holding slots.

uvicorn's own `limit_concurrency` decides per request, once the headers are in, and counts every open
connection: a client that opens connections and never finishes a request fills the server for
everybody (1,100 such connections from one address got a good exporter 503 on 12 of 14 tries).
Here each connection is admitted or refused the moment it opens:

- at most `max_connections` admitted at once (requests still running count too, as in uvicorn);
- at most `per_client` of them from one peer address (an IPv6 client by its /64, which one host
  owns), so one client cannot take every slot, however fast it reconnects;
- a refused connection takes no slot: its request, if one arrives within `REFUSAL_WAIT_S`, gets a 503
  with `Connection: close` (exporters retry it), then it is closed.

An admitted connection must deliver its request headers within `header_timeout_s` of opening (or of
its previous response), else it is closed: h11 would wait for them forever. The body's deadline is
the app's (the OTLP receiver answers 408). Headers, then body, each within the timeout: that bounds
how long any slow client holds a slot, so trickling bytes buys nothing (the rate floor).

When the server belongs to a receiver, each refusal moves `ragpulse_receiver_rejected_total` with
reason `connection_cap`, `client_cap`, `timeout` (headers too slow) or `bad_framing` (h11's 400).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from collector.metrics import RECEIVER_REJECTED, RejectReason

logger = logging.getLogger(__name__)

REFUSAL_WAIT_S = 1.0  # a real client sends its request right after connecting
_LOG_INTERVAL_S = 10.0


def client_key(client: tuple[str, int] | None) -> str:
    """Whom a connection is counted against: its IPv4 address, or its IPv6 /64."""
    if client is None:
        return ""
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return client[0]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class Admission:
    """The connections one server has admitted, in all and per client. Used on the server's loop only."""

    def __init__(self, name: str, max_connections: int, per_client: int | None = None) -> None:
        self.name, self.max_connections = name, max_connections
        self.per_client = min(per_client or max_connections, max_connections)
        self._by_client: dict[str, int] = {}
        self._total = 0
        self._logged_at = -float("inf")
        self._unlogged = 0

    def admit(self, key: str, tasks: int) -> RejectReason | None:
        """None when admitted (then `release` it once closed), else why it is refused."""
        held = self._by_client.get(key, 0)
        if held >= self.per_client and self.per_client < self.max_connections:
            reason: RejectReason = "client_cap"
        elif self._total >= self.max_connections or tasks >= self.max_connections:
            reason = "connection_cap"
        else:
            self._by_client[key] = held + 1
            self._total += 1
            return None
        self._log(key, reason)
        return reason

    def release(self, key: str) -> None:
        held = self._by_client.pop(key) - 1
        if held:
            self._by_client[key] = held
        self._total -= 1

    def _log(self, key: str, reason: RejectReason) -> None:
        """One line per `_LOG_INTERVAL_S`: a flood is thousands of refusals a second."""
        now = time.monotonic()
        if now - self._logged_at < _LOG_INTERVAL_S:
            self._unlogged += 1
            return
        if reason == "client_cap":
            why = f"{key or 'a client'} already holds {self.per_client} connections, its share"
        else:
            why = f"{self.max_connections} connections are open, the limit"
        more = f" ({self._unlogged} more refused since the last line)" if self._unlogged else ""
        self._logged_at, self._unlogged = now, 0
        logger.warning("%s refused a connection: %s; 503 (retryable) and closed%s", self.name, why, more)


def _refusal(message: str) -> bytes:
    body = message.encode()
    head = (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"connection: close\r\nretry-after: 1\r\ncontent-length: %d\r\n\r\n" % len(body)
    )
    return head + body


_REFUSALS = {
    "client_cap": _refusal("too many connections from this client; retry later"),
    "connection_cap": _refusal("too many connections; retry later"),
}


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with admission at connect time and a deadline for each request's headers.
    `HttpServer` makes a subclass per server, setting the three class attributes."""

    header_timeout_s = 30.0
    admission: Admission
    receiver = ""  # the `receiver` label of refusals; "" = not counted (the status server)

    _deadline: asyncio.TimerHandle | None = None
    _refused: RejectReason | None = None
    _key: str | None = None  # the client's key while this connection holds one of its slots
    _answered = False
    _requests = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)  # in `server_state.connections` either way: shutdown closes it
        key = client_key(self.client)
        self._refused = self.admission.admit(key, len(self.tasks))
        if self._refused is None:
            self._key = key
            self._arm(self.header_timeout_s)
        else:
            self._reject(self._refused)
            self._arm(min(self.header_timeout_s, REFUSAL_WAIT_S))

    def data_received(self, data: bytes) -> None:
        if self._refused is None:
            super().data_received(data)
        elif not self._answered:
            self._answer_refused(data)

    def on_response_complete(self) -> None:
        self._requests += 1
        super().on_response_complete()
        self._arm(self.header_timeout_s)

    def send_400_response(self, msg: str) -> None:
        self._reject("bad_framing")
        super().send_400_response(msg)

    def shutdown(self) -> None:
        if self._refused is not None:  # h11 is mid-request on a refused connection: just close it
            self.transport.close()
        else:
            super().shutdown()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        if self._key is not None:
            self.admission.release(self._key)
            self._key = None
        super().connection_lost(exc)

    def _answer_refused(self, data: bytes) -> None:
        """503 once the request head is in; the rest of what the client sends is read and dropped, so
        that closing does not reset the connection before the client has read its answer."""
        self.conn.receive_data(data)
        try:
            event = self.conn.next_event()
        except h11.RemoteProtocolError:
            self.transport.close()
            return
        if event is h11.NEED_DATA:
            return
        assert self._refused is not None
        self._answered = True
        self.transport.write(_REFUSALS[self._refused])
        self.transport.write_eof()  # the client reads the 503, closes, and eof_received closes ours
        self._arm(REFUSAL_WAIT_S)

    def _reject(self, reason: RejectReason) -> None:
        if self.receiver:
            RECEIVER_REJECTED.labels(self.receiver, reason).inc()

    def _arm(self, timeout_s: float) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(timeout_s, self._expire)

    def _expire(self) -> None:
        if self.transport.is_closing():
            return
        if self._refused is not None:
            self.transport.close()
        elif self.conn.their_state is h11.IDLE:  # the request line and headers never completed
            if self._requests == 0 or self.conn.trailing_data[0]:  # not merely idle after a response
                self._reject("timeout")
            self.transport.close()
