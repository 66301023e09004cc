"""The reliability suite: each test states one promise, breaks the stack the way production does,
and measures trace ids produced against trace ids scored in every exporter. The figures of each
experiment are printed at the end of the run (and kept in $RAGPULSE_RELIABILITY_REPORT if set)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from testkit.otlp_sink import OtlpSink

_FIGURES: list[str] = []


class Report:
    def __init__(self, promise: str) -> None:
        self.promise = promise

    def figure(self, text: str) -> None:
        line = f"{self.promise}: {text}"
        _FIGURES.append(line)
        path = os.environ.get("RAGPULSE_RELIABILITY_REPORT")
        if path:
            with open(path, "a", encoding="utf-8") as out:
                out.write(line + "\n")


@pytest.fixture
def report(request: pytest.FixtureRequest) -> Report:
    return Report(request.node.name)


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as running:
        yield running


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _FIGURES:
        terminalreporter.section("reliability figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)
