"""Run the real collector in-process (its own asyncio loop in a thread) and watch what it logs."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from collector.config import Settings, load_settings
from collector.pipeline.service import Service, build


class _RecordLines(logging.Handler):
    def __init__(self, thread: threading.Thread) -> None:
        super().__init__()
        self.records: list[dict[str, Any]] = []
        self._thread = thread

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if record.thread == self._thread.ident and message.startswith("rag_record "):
            self.records.append(json.loads(message.removeprefix("rag_record ")))


class RunningCollector:
    def __init__(self, evaluate: bool = False, **overrides: Any) -> None:
        overrides = {
            "metrics_port": 0,
            "otlp.port": 0,
            "otlp.grpc_port": 0,
            "log_records": True,
            "assembly.quiet_period_s": 0.3,
            **overrides,
        }
        self.settings: Settings = load_settings(None, **overrides)
        self.service: Service = build(self.settings, evaluate=evaluate)
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._lines = _RecordLines(self._thread)  # only this collector's pipeline thread

    @property
    def records(self) -> list[dict[str, Any]]:
        return list(self._lines.records)

    def _main(self) -> None:
        async def go() -> None:
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
            await self.service.pipeline.run(self._stop)

        asyncio.run(go())

    def __enter__(self) -> RunningCollector:
        logging.getLogger("collector.pipeline.pipeline").addHandler(self._lines)
        logging.getLogger("collector.pipeline.pipeline").setLevel(logging.INFO)
        self.service.status.start()
        self._thread.start()
        wait_for(lambda: self.service.pipeline.ready, 30, "collector ready")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(60)
        self.service.status.shutdown()
        logging.getLogger("collector.pipeline.pipeline").removeHandler(self._lines)


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
