"""A real OpenTelemetry Collector (this folder's main.go, built by scripts/otelcol.sh) that stores what
it receives: its OTLP/HTTP receiver on a free port, its file exporter writing OTLP JSON, one file for
logs and one for traces, so a test reads what a backend behind a Collector would be given.

The files hold one OTLP JSON export request per line (ids in hex, 64-bit integers as strings, as the
OTLP JSON encoding says); `log_records()` and `spans()` flatten them with their resource attributes.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from testkit.process import free_port, terminate

BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "otelcol.sh"

CONFIG = """\
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}
exporters:
  file/logs:
    path: {logs}
    flush_interval: 100ms
  file/traces:
    path: {traces}
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
{pipelines}"""


def build() -> Path:
    """The collector binary, built once (minutes the first time; see scripts/otelcol.sh)."""
    result = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise AssertionError(f"scripts/otelcol.sh failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


def any_value(value: dict[str, Any]) -> object:
    """An OTLP JSON AnyValue as Python (intValue travels as a string)."""
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    return next(iter(value.values()), None)


def attributes(pairs: list[dict[str, Any]]) -> dict[str, object]:
    return {pair["key"]: any_value(pair.get("value", {})) for pair in pairs}


class OtelCollector:
    """`with OtelCollector(tmp_path) as collector:` receives on `collector.traces_url` / `logs_url`.
    `signals` chooses the pipelines: ("traces",) makes a Collector that takes no logs (/v1/logs 404)."""

    def __init__(
        self, workdir: Path, signals: tuple[str, ...] = ("logs", "traces"), binary: Path | None = None
    ) -> None:
        self.workdir, self.signals, self.binary = workdir, signals, binary
        self.port = free_port()
        self.logs_file, self.traces_file = workdir / "logs.json", workdir / "traces.json"
        self.log = workdir / "otelcol.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def traces_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    @property
    def logs_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/logs"

    def start(self, timeout_s: float = 60.0) -> OtelCollector:
        binary = self.binary or build()
        pipelines = "".join(
            f"    {signal_}:\n      receivers: [otlp]\n      exporters: [file/{signal_}]\n"
            for signal_ in self.signals
        )
        config = self.workdir / "otelcol.yaml"
        config.write_text(
            CONFIG.format(port=self.port, logs=self.logs_file, traces=self.traces_file, pipelines=pipelines)
        )
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(binary), "--config", f"file:{config}"], stdout=log, stderr=log, cwd=self.workdir
            )
        deadline = time.monotonic() + timeout_s
        while not self._listening():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"the collector did not start:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.1)
        return self

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def _requests(self, path: Path) -> list[dict[str, Any]]:
        if not path.exists():
            return []
        requests = []
        for line in path.read_text().splitlines():
            try:
                requests.append(json.loads(line))
            except json.JSONDecodeError:  # a line still being written: read on the next call
                break
        return requests

    def _items(self, path: Path, resource_key: str, scope_key: str, items_key: str) -> list[dict[str, Any]]:
        """Every item stored in `path`'s requests (nested `resource_key` / `scope_key` / `items_key`, as
        OTLP nests them), with `resource` (its resource's attributes) and `attributes` decoded."""
        return [
            {
                **item,
                "resource": attributes(resource.get("resource", {}).get("attributes", [])),
                "attributes": attributes(item.get("attributes", [])),
            }
            for request in self._requests(path)
            for resource in request.get(resource_key, [])
            for scope in resource.get(scope_key, [])
            for item in scope.get(items_key, [])
        ]

    def log_records(self) -> list[dict[str, Any]]:
        """Every stored log record, with `resource` (its resource's attributes) and `attributes` decoded."""
        return self._items(self.logs_file, "resourceLogs", "scopeLogs", "logRecords")

    def spans(self) -> list[dict[str, Any]]:
        """Every stored span, with `resource` and `attributes` decoded and `events` as stored."""
        return self._items(self.traces_file, "resourceSpans", "scopeSpans", "spans")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            terminate(self.process, 30)

    def __enter__(self) -> OtelCollector:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
