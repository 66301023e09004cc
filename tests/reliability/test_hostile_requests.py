"""No request can stop, stall or swell the OTLP/HTTP receiver: half-sent requests are cut off after
`otlp.request_timeout_s`, connections beyond `otlp.max_connections` get a retryable 503, and every
malformed request gets its status while well-formed exporters keep being served."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import psutil
import pytest

from testkit.hostile import nested_protobuf
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import encode, make_spans
from tests.reliability.conftest import Report

TIMEOUT_S, MAX_CONNECTIONS = 2, 100


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


def _connect(port: int, first_bytes: bytes) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
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
    headers_only = b"POST /v1/traces HTTP/1.1\r\nHost: ragpulse\r\nContent-Type: application/x-protobuf\r\n"
    slowloris = [_connect(sidecar.otlp_port, headers_only) for _ in range(MAX_CONNECTIONS // 2)]
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
