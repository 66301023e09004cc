"""`ragpulse demo` as a user starts it, for the browser tests, and where their screenshots go."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from testkit.process import free_port, http_status

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "page"


class Demo:
    """`python -m collector.commands.cli demo` on free ports; ready once /readyz answers 200."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.argv = [
            sys.executable, "-m", "collector.commands.cli", "demo", "--rate", "10", "--otlp-port", "0",
            "--otlp-grpc-port", "0", "--metrics-port", str(self.port), *args,
        ]  # fmt: skip
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.log = Path(tempfile.mkstemp(prefix="ragpulse-demo-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Demo:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(self.argv, env=self.env, stdout=log, stderr=log, cwd=REPO)
        deadline = time.monotonic() + 120
        while http_status(f"{self.url}/readyz") != 200:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"ragpulse demo did not become ready:\n{self.output()[-4000:]}")
            time.sleep(0.2)
        return self

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def screenshot(page: Any, name: str, full_page: bool = True) -> Path:
    """Kept under test-artifacts/page/ (gitignored) for a person to look at after the run."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
