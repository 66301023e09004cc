"""Test judges that are not a model: `NoCallsJudge` proves a metric never asks its judge anything."""

from __future__ import annotations

from typing import Any

from evaluators.judges.base import JudgeInfo


class NoCallsJudge:
    """A judge whose every operation fails the test: for metrics that must count without a judge."""

    info = JudgeInfo("refusing", "none")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        async def operation(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError(f"the judge's {name!r} was called")

        return operation
