"""No request can stop, stall or swell the OTLP/HTTP receiver: half-sent requests are cut off after
`otlp.request_timeout_s`, connections beyond `otlp.max_connections` (or beyond one client's share,
`otlp.max_connections_per_client`) get a retryable 503, every malformed request gets its status while
well-formed exporters keep being served, and each refusal shows in `ragpulse_receiver_rejected_total`.

Linux routes all of 127/8 to loopback: a socket bound to 127.0.0.N before connecting is another client."""

from __future__ import annotations

import selectors
import socket
import time
from collections.abc import Iterator
from typing import get_args

import psutil
import pytest

from collector.metrics import RejectReason
from collector.receivers.otlp import OtlpConfig
from testkit.hostile import nested_protobuf
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import encode, make_spans
from testkit.scrape import scrape
from tests.reliability.conftest import Report

TIMEOUT_S, MAX_CONNECTIONS = 2, 100
PER_CLIENT = OtlpConfig(max_connections=MAX_CONNECTIONS).connections_per_client  # the default: 25
HEADERS_ONLY = b"POST /v1/traces HTTP/1.1\r\nHost: ragpulse\r\nContent-Type: application/x-protobuf\r\n"
REASONS: tuple[str, ...] = get_args(RejectReason)


@pytest.fixture(scope="module")
def sidecar() -> Iterator[RagpulseProcess]:
    env = {
        "RAGPULSE_OTLP__REQUEST_TIMEOUT_S": str(TIMEOUT_S),
        "RAGPULSE_OTLP__MAX_CONNECTIONS": str(MAX_CONNECTIONS),
        "RAGPULSE_ASSEMBLY__QUIET_PERIOD_S": "0.5",
        "RAGPULSE_ASSEMBLY__MAX_AGE_S": "3",
    }
    with RagpulseProcess(env=env) as process:
        yield process


def _connect(port: int, first_bytes: bytes, source: str = "127.0.0.1") -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    connection.sendall(first_bytes)
    return connection


def _closed_by_server(connection: socket.socket) -> bool:
    """The server hung up (or answered and hung up); False if it still waits for us."""
    connection.settimeout(0.2)
    try:
        connection.recv(65536)  # b"" (closed) or an error status before closing: cut off either way
        return True
    except TimeoutError:
        return False
    except OSError:
        return True


def _answer(connection: socket.socket) -> bytes:
    connection.settimeout(TIMEOUT_S + 5)
    try:
        return connection.recv(65536)
    except OSError:
        return b""


def test_slow_clients_are_cut_off_and_exporters_keep_being_served(
    sidecar: RagpulseProcess, report: Report
) -> None:
    assert sidecar.process is not None
    process = psutil.Process(sidecar.process.pid)
    threads_before = process.num_threads()
    slowloris = [  # two clients, each within its share: every one of them is cut by the timeout
        _connect(sidecar.otlp_port, HEADERS_ONLY, f"127.0.0.{2 + i % 2}") for i in range(MAX_CONNECTIONS // 2)
    ]
    while_attacked = post_traces(sidecar.otlp_port, encode(make_spans("openinference")))[0]
    threads_during = process.num_threads()
    time.sleep(TIMEOUT_S + 1.5)
    cut_off = sum(_closed_by_server(c) for c in slowloris)
    for connection in slowloris:
        connection.close()

    slow_body = _connect(
        sidecar.otlp_port,
        b"POST /v1/traces HTTP/1.1\r\nHost: ragpulse\r\nContent-Type: application/x-protobuf\r\n"
        b"Content-Length: 1000\r\n\r\n" + b"\x0a" * 10,
    )
    slow_body_answer = _answer(slow_body)
    slow_body.close()

    flood = [_connect(sidecar.otlp_port, b"") for _ in range(MAX_CONNECTIONS + 50)]
    over_limit = post_traces(sidecar.otlp_port, encode(make_spans("openinference")))[0]
    for connection in flood:
        connection.close()
    time.sleep(TIMEOUT_S + 1)
    after = post_traces(sidecar.otlp_port, encode(make_spans("openinference")))[0]
    report.figure(
        f"{len(slowloris)} half-sent requests: {cut_off} cut off after {TIMEOUT_S}s, threads "
        f"{threads_before} -> {threads_during}; slow body answered {slow_body_answer[:12]!r}; "
        f"{len(flood)} idle connections: a request beyond them got {over_limit}, after them {after}"
    )
    assert while_attacked == 200
    assert threads_during <= threads_before + 2  # no thread per connection
    assert cut_off == len(slowloris)
    assert slow_body_answer.startswith(b"HTTP/1.1 408")
    assert over_limit in (200, 503)  # 503 (retryable) once the idle ones fill the limit
    assert after == 200


@pytest.mark.parametrize(
    ("name", "request_bytes", "status"),
    [
        ("negative length", b"Content-Length: -200000000\r\n\r\n", b"400"),
        ("non-numeric length", b"Content-Length: 12abc\r\n\r\n", b"400"),
        ("two lengths", b"Content-Length: 5\r\nContent-Length: 7\r\n\r\nabcde", b"400"),
        ("chunked garbage", b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", b"400"),
        ("length over the limit", b"Content-Length: 999999999999\r\n\r\n", b"413"),
        # No length and not chunked: the body is empty (an empty export, accepted); what follows is
        # read as the next request, which is not one.
        ("no length", b"\r\n" + b"\x0a\x00" * 10, b"200"),
    ],
)
def test_malformed_framing_gets_an_answer(
    sidecar: RagpulseProcess, name: str, request_bytes: bytes, status: bytes
) -> None:
    head = b"POST /v1/traces HTTP/1.1\r\nHost: ragpulse\r\nContent-Type: application/x-protobuf\r\n"
    connection = _connect(sidecar.otlp_port, head + request_bytes)
    answer = _answer(connection)
    connection.close()
    assert answer.split(b" ")[1:2] == [status], (name, answer[:200])
    assert post_traces(sidecar.otlp_port, encode(make_spans("openinference")))[0] == 200


@pytest.mark.parametrize(
    ("name", "content_type", "body"),
    [
        (
            "invalid UTF-8 in JSON",
            "application/json",
            b'{"resourceSpans":[{"resource":{"attributes":[{"key":"\xff\xfe"}]}}]}',
        ),
        (
            "JSON nested 100,000 deep",
            "application/json",
            b'{"resourceSpans":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        ),
        ("protobuf nested 100,000 deep", "application/x-protobuf", nested_protobuf(100_000)),
    ],
)
def test_undecodable_bodies_get_a_400_and_nothing_else(
    sidecar: RagpulseProcess, name: str, content_type: str, body: bytes
) -> None:
    assert post_traces(sidecar.otlp_port, body, content_type)[0] == 400, name
    assert post_traces(sidecar.otlp_port, encode(make_spans("openinference")))[0] == 200


def _rejected(sidecar: RagpulseProcess) -> dict[str, float]:
    metrics = scrape(sidecar.metrics_port)
    return {
        reason: metrics.value("ragpulse_receiver_rejected_total", receiver="otlp", reason=reason)
        for reason in REASONS
    }


def _status(port: int, source: str, request: bytes) -> bytes:
    """The status a raw request from `source` gets ("HTTP/1.1 503 ..." -> b"503"), b"" if none."""
    connection = _connect(port, request, source)
    answer = _answer(connection)
    connection.close()
    return answer.split(b" ")[1] if answer.startswith(b"HTTP/1.1 ") else b""


def test_one_client_cannot_take_every_connection(sidecar: RagpulseProcess, report: Report) -> None:
    """The flood holds its share (PER_CLIENT) and is refused beyond it, however it reconnects, while a
    client from another address is served on every try."""
    before = _rejected(sidecar)
    flood_size, probes, reconnects = MAX_CONNECTIONS + 50, 14, 0
    flood = selectors.DefaultSelector()
    for _ in range(flood_size):  # more slow connections than the whole server takes, from one address
        flood.register(_connect(sidecar.otlp_port, HEADERS_ONLY, "127.0.0.10"), selectors.EVENT_READ)
    statuses = []
    for _ in range(probes):  # about 3.5 s: past TIMEOUT_S, so the flood's own slots are cut and retaken
        statuses.append(post_traces(sidecar.otlp_port, encode(make_spans("openinference")))[0])
        time.sleep(0.25)
        for key, _ in flood.select(timeout=0):  # closed by the server: reconnect at once
            flood.unregister(key.fileobj)
            key.fileobj.close()  # type: ignore[union-attr]
            flood.register(_connect(sidecar.otlp_port, HEADERS_ONLY, "127.0.0.10"), selectors.EVENT_READ)
            reconnects += 1
    for key in list(flood.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    flood.close()
    after = _rejected(sidecar)
    refused, cut = after["client_cap"] - before["client_cap"], after["timeout"] - before["timeout"]
    report.figure(
        f"{flood_size} slow connections from one address (share {PER_CLIENT} of {MAX_CONNECTIONS}), "
        f"{reconnects} reconnects: another client got 200 on {statuses.count(200)} of {probes} probes; "
        f"{refused:.0f} refused as client_cap, {cut:.0f} cut as timeout"
    )
    assert statuses == [200] * probes
    assert refused >= flood_size - PER_CLIENT


def _wait_for_no_connections(sidecar: RagpulseProcess) -> None:
    """Until the sidecar holds no OTLP/HTTP connection (earlier tests' are closing): exact counts."""
    assert sidecar.process is not None
    process = psutil.Process(sidecar.process.pid)
    deadline = time.monotonic() + 30  # a hang guard only
    while any(c.laddr and c.laddr.port == sidecar.otlp_port and c.raddr for c in process.net_connections()):
        assert time.monotonic() < deadline, "the sidecar kept connections open"
        time.sleep(0.1)


def test_refusals_and_framing_errors_are_counted(sidecar: RagpulseProcess, report: Report) -> None:
    port = sidecar.otlp_port
    _wait_for_no_connections(sidecar)
    before = _rejected(sidecar)
    holders = [  # four clients, each at its share: every slot taken, until the timeout cuts them
        _connect(port, HEADERS_ONLY, f"127.0.0.{20 + i // PER_CLIENT}") for i in range(MAX_CONNECTIONS)
    ]
    request = HEADERS_ONLY + b"Content-Length: 2\r\n\r\n\x0a\x00"
    over_client = [_status(port, "127.0.0.20", request) for _ in range(3)]  # that client is at its share
    over_server = [_status(port, "127.0.0.30", request) for _ in range(3)]  # a new client, no slot left
    for holder in holders:
        _answer(holder)  # b"": closed by the server after TIMEOUT_S
        holder.close()
    framing = [
        _status(port, "127.0.0.1", HEADERS_ONLY + b"Content-Length: -200000000\r\n\r\n"),
        _status(port, "127.0.0.1", HEADERS_ONLY + b"Content-Length: 5\r\nContent-Length: 7\r\n\r\nabcde"),
        _status(port, "127.0.0.1", HEADERS_ONLY + b"Content-Length: 999999999999\r\n\r\n"),
        _status(port, "127.0.0.1", HEADERS_ONLY + b"Content-Length: 1000\r\n\r\n" + b"\x0a" * 10),
    ]
    undecodable = post_traces(port, nested_protobuf(100_000))[0]
    wrong_type = post_traces(port, encode(make_spans("openinference")), "text/plain")[0]
    after = _rejected(sidecar)
    counted = {reason: after[reason] - before[reason] for reason in REASONS}
    report.figure(
        f"{MAX_CONNECTIONS} slow holders, 3 requests over a client's share ({over_client[0]!r}), 3 over "
        f"the cap ({over_server[0]!r}), framing {framing}, {undecodable}, {wrong_type}: "
        + ", ".join(f"{reason}={value:.0f}" for reason, value in counted.items())
    )
    assert over_client == over_server == [b"503"] * 3
    assert framing == [b"400", b"400", b"413", b"408"]
    assert (undecodable, wrong_type) == (400, 415)
    assert counted == {
        "connection_cap": 3,
        "client_cap": 3,
        "timeout": MAX_CONNECTIONS + 1,  # the holders, and the slow body
        "bad_framing": 2,
        "too_large": 1,
        "bad_body": 1,
        "bad_content_type": 1,
        "shutting_down": 0,
    }
