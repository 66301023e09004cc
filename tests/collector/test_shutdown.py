"""Ctrl-C and SIGTERM end `ragpulse demo` and `ragpulse run` promptly and quietly.

Before: Ctrl-C on the demo took ~12 s and printed a screen of export retries, because the sidecar
closed its receiver while the demo's app was still exporting to it. Bounds here are generous on
purpose (speed is measured, not asserted); quietness is asserted exactly.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time

import pytest

from collector.assemble import AssemblyConfig, TraceAssembler
from collector.deadletter import LogDeadLetters
from collector.pipeline import EvaluationConfig, Pipeline
from testkit.process import RagpulseProcess

PORTS = ("--metrics-port", "0", "--otlp-port", "0", "--otlp-grpc-port", "0")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_demo_stops_quietly(sig: signal.Signals) -> None:
    demo = subprocess.Popen(
        [sys.executable, "-m", "collector.cli", "demo", *PORTS],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    time.sleep(6)
    demo.send_signal(sig)
    output, _ = demo.communicate(timeout=15)
    assert demo.returncode == 0, output[-3000:]
    noisy = [
        line for line in output.splitlines() if "WARNING" in line or "ERROR" in line or "Traceback" in line
    ]
    assert noisy == [], "\n".join(noisy[:5])


def test_run_drains_on_sigterm_and_a_second_signal_exits_at_once() -> None:
    with RagpulseProcess() as ragpulse:
        assert ragpulse.process is not None
        assert ragpulse.stop() == 0  # SIGTERM: a graceful drain
    ragpulse = RagpulseProcess().start()
    assert ragpulse.process is not None
    ragpulse.process.send_signal(signal.SIGINT)
    ragpulse.process.send_signal(signal.SIGINT)
    assert ragpulse.process.wait(15) in (0, 130)  # the second one may land before the drain is done
    assert "Traceback" not in ragpulse.output()


class _StuckExporter:
    """An exporter whose shutdown never returns (a wedged client library)."""

    saturated = False

    def __init__(self) -> None:
        self.release = threading.Event()

    def export(self, record: object, evaluations: object) -> None:
        pass

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return True

    def shutdown(self) -> None:
        self.release.wait()


def test_a_component_stuck_in_shutdown_is_named_and_left_behind(caplog: pytest.LogCaptureFixture) -> None:
    stuck = _StuckExporter()
    pipeline = Pipeline(
        receivers=[],
        assembler=TraceAssembler(AssemblyConfig()),
        dead_letters=LogDeadLetters(),
        exporters=[stuck],  # type: ignore[list-item]
        config=EvaluationConfig(shutdown_deadline_s=0.5),
    )

    async def run_then_stop() -> None:
        stop = asyncio.Event()
        stop.set()
        await pipeline.run(stop)

    asyncio.run(run_then_stop())  # returns: the drain does not wait forever on the stuck exporter
    stuck.release.set()
    assert "shutdown: _StuckExporter did not finish within 1 s; exiting without it" in caplog.text
