"""`Evaluation`: one metric's outcome for one record, as the exporters see it.

The pipeline converts the evaluators' results into this small value, so exporters depend on
neither the evaluators' internals nor the judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    UNMEASURED = "unmeasured"


@dataclass(frozen=True, slots=True)
class Evaluation:
    metric: str  # e.g. "faithfulness"
    outcome: Outcome
    score: float | None  # None unless outcome is passed/failed; never NaN
    reason: str
    threshold: float
    lower_is_better: bool
    judge: str  # "offline", "openai", "cascade"
    judge_model: str
    duration_s: float = 0.0
