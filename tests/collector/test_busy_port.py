"""A port that is already taken (say, by a local OTel Collector on 4318) is one clear line and an exit."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from testkit.process import free_port


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        ("run", "--otlp-port"),
        ("run", "--otlp-grpc-port"),
        ("run", "--metrics-port"),
        ("demo", "--otlp-port"),
    ],
)
def test_a_taken_port_is_named_with_the_setting_that_moves_it(command: str, flag: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        ports = {"--otlp-port": free_port(), "--otlp-grpc-port": free_port(), "--metrics-port": free_port()}
        ports[flag] = port
        args = [arg for pair in ports.items() for arg in (pair[0], str(pair[1]))]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "collector.commands.cli",
                command,
                *args,
                *(["--duration", "5"] if command == "demo" else []),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("ragpulse:")]
    assert len(errors) == 1 and str(port) in errors[0] and flag in errors[0], result.stderr
    assert "Traceback" not in result.stderr
