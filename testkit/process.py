"""`ragpulse run` as a user runs it: a subprocess, talked to over its ports."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

_handed_out: set[int] = set()


def terminate(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    """SIGTERM, then SIGKILL if `process` has not exited `timeout_s` later: no process is left behind."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def free_port() -> int:
    """A port nothing listens on, never one this process handed out before: the kernel may offer a port
    again as soon as its probing socket closes, and two settings given the same port collide at bind."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def tree_memory_mib(pid: int) -> float:
    """Proportional set size (PSS) of a process and all its descendants, in MiB: the sidecar plus its
    offline judge workers, pages they share (the forked model) counted once, not once per process."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
        return sum(p.memory_full_info().pss for p in processes if p.is_running()) / 2**20
    except psutil.Error:
        return 0.0


def http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


class RagpulseProcess:
    """Starts `ragpulse run ARGS` with free ports and waits until /readyz answers 200."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, ready_timeout_s: float = 90) -> None:
        self.metrics_port, self.otlp_port = free_port(), free_port()
        self.args = [
            "run",
            "--metrics-port",
            str(self.metrics_port),
            "--otlp-port",
            str(self.otlp_port),
            "--otlp-grpc-port",
            "0",
            *args,
        ]
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.ready_timeout_s = ready_timeout_s
        self.log = Path(tempfile.mkstemp(prefix="ragpulse-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}"

    def start(self) -> RagpulseProcess:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "collector.commands.cli", *self.args],
                env=self.env,
                stdout=log,
                stderr=log,
            )
        deadline = time.monotonic() + self.ready_timeout_s
        while http_status(f"{self.metrics_url}/readyz") != 200:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"ragpulse did not become ready:\n{self.output()[-4000:]}")
            time.sleep(0.2)
        return self

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(30)

    def stop(self, timeout_s: float = 60.0) -> int:
        """SIGTERM, and the exit code of the drain. A process still running after `timeout_s` gets a
        second SIGTERM (ragpulse then prints every thread's stack and exits) and the test fails with
        the log's tail: no process is left behind, and the hang is explained."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            terminate(self.process, 10)
            raise AssertionError(
                f"ragpulse did not exit within {timeout_s:.0f} s of SIGTERM:\n{self.output()[-8000:]}"
            ) from None

    def __enter__(self) -> RagpulseProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.stop()
