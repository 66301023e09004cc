"""ragpulse evaluators: RAG metrics (faithfulness, relevancy, retrieval quality, ...) as a library.

    from evaluators import Faithfulness, OpenAIJudge, TestCase, evaluate

Imports nothing from `collector`; usable on its own like ragas or deepeval.
"""

from typing import TYPE_CHECKING, Any

from evaluators import metrics
from evaluators.case import CaseField, MissingFieldError, TestCase, Turn
from evaluators.causes import STAGE, Cause, failure_causes, passage_relevance
from evaluators.evaluate import a_evaluate, a_evaluate_case, evaluate
from evaluators.images import image_positions
from evaluators.judges.accounting import CallRecord, Price
from evaluators.judges.base import Judge, JudgeError, JudgeInfo, Usage
from evaluators.metrics import *  # noqa: F403 (the metrics' API is the library's: `__all__` below)
from evaluators.metrics.custom import CustomMetrics, CustomMetricsError, load_custom_metrics
from evaluators.refusals import is_refusal
from evaluators.result import (
    CaseResult,
    EvaluationResult,
    MetricResult,
    MetricSummary,
    Outcome,
    VerdictRecord,
)
from evaluators.testing import assert_rag

if TYPE_CHECKING:
    from evaluators.judges.openai_judge import OpenAIJudge


def __getattr__(name: str) -> Any:
    """`OpenAIJudge` on first use: importing `openai` costs ~0.4 s, which a process that judges
    offline (a sidecar worker, a CI run without a key) should not pay at start-up."""
    if name == "OpenAIJudge":
        from evaluators.judges.openai_judge import OpenAIJudge

        globals()[name] = OpenAIJudge
        return OpenAIJudge
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "STAGE",
    "CallRecord",
    "CaseField",
    "CaseResult",
    "Cause",
    "CustomMetrics",
    "CustomMetricsError",
    "EvaluationResult",
    "Judge",
    "JudgeError",
    "JudgeInfo",
    "MetricResult",
    "MetricSummary",
    "MissingFieldError",
    "OpenAIJudge",
    "Outcome",
    "Price",
    "TestCase",
    "Turn",
    "Usage",
    "VerdictRecord",
    "a_evaluate",
    "a_evaluate_case",
    "assert_rag",
    "evaluate",
    "failure_causes",
    "image_positions",
    "is_refusal",
    "load_custom_metrics",
    "passage_relevance",
]
__all__ += metrics.__all__  # every metric class, and the registry's functions
