"""A real single-node Kafka broker driven through scripts/kafka.sh, for tests and benchmarks that
inject faults: freeze it, crash it, bring it back on the same port with the data that survived."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

KAFKA_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "kafka.sh"
# A cold fetch downloads ~45 MB of jars from Maven Central; a start formats storage and boots a JVM.
SCRIPT_TIMEOUTS_S = {"fetch": 900, "start": 240, "restart": 240, "stop": 60}


class KafkaScriptError(RuntimeError):
    """scripts/kafka.sh failed; the message carries its output."""


def run_kafka_script(command: str, env: dict[str, str]) -> str:
    """Run one scripts/kafka.sh command; returns its stdout (the bootstrap address for start)."""
    try:
        result = subprocess.run(
            ["bash", str(KAFKA_SCRIPT), command],
            env=env,
            capture_output=True,
            text=True,
            timeout=SCRIPT_TIMEOUTS_S[command],
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise KafkaScriptError(f"scripts/kafka.sh {command} did not finish within {exc.timeout}s") from None
    if result.returncode != 0:
        raise KafkaScriptError(
            f"scripts/kafka.sh {command} failed (exit {result.returncode}):\n{result.stderr}{result.stdout}"
        )
    return result.stdout.strip()


def broker_env(state: Path, watch_pid: int | None = None) -> dict[str, str]:
    """The script's environment for a broker whose pid, port and data live in `state`; with
    `watch_pid`, the script's watchdog stops the broker once that process is gone."""
    env = {**os.environ, "RAGPULSE_KAFKA_STATE": str(state), "PYTHON": sys.executable}
    if watch_pid is not None:
        env["RAGPULSE_KAFKA_WATCH_PID"] = str(watch_pid)
    return env


class FaultyBroker:
    """A broker of its own for fault injection. `freeze()` (SIGSTOP) makes it accept connections and
    answer nothing, the worst case for a client; `resume()` undoes it. `kill()` is a crash (SIGKILL);
    `restart()` brings it back on the same port with the data that survived, as an orchestrator would."""

    def __init__(self, state: Path, watch_pid: int | None = None) -> None:
        self.state, self._env = state, broker_env(state, watch_pid)
        run_kafka_script("fetch", self._env)  # cached: a no-op after the first run
        self.bootstrap = run_kafka_script("start", self._env)

    @property
    def pid(self) -> int:
        return int((self.state / "broker.pid").read_text())

    def freeze(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def kill(self) -> None:
        pid = self.pid
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)

    def restart(self) -> None:
        restarted = run_kafka_script("restart", self._env)
        if restarted != self.bootstrap:
            raise KafkaScriptError(f"the broker came back on {restarted}, not {self.bootstrap}")

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.resume()
        run_kafka_script("stop", self._env)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed broker may stay one until its parent reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
