"""Send an OTLP/HTTP request the way an exporter does, and read the status the receiver answers."""

from __future__ import annotations

import http.client

PROTOBUF = "application/x-protobuf"


def post(
    port: int,
    path: str,
    body: bytes,
    content_type: str = PROTOBUF,
    encoding: str | None = None,
) -> tuple[int, bytes]:
    """POST `body` to 127.0.0.1:`port``path`; returns (status, response body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def post_traces(
    port: int, body: bytes, content_type: str = PROTOBUF, encoding: str | None = None
) -> tuple[int, bytes]:
    return post(port, "/v1/traces", body, content_type, encoding)


def post_logs(
    port: int, body: bytes, content_type: str = PROTOBUF, encoding: str | None = None
) -> tuple[int, bytes]:
    return post(port, "/v1/logs", body, content_type, encoding)
