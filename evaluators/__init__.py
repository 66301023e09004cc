"""ragpulse evaluators: RAG metrics (faithfulness, relevancy, retrieval quality, ...) as a library.

    from evaluators import Faithfulness, OpenAIJudge, TestCase, evaluate

Imports nothing from `collector`; usable on its own like ragas or deepeval.
"""

from typing import TYPE_CHECKING, Any

from evaluators.case import CaseField, MissingFieldError, TestCase, Turn
from evaluators.causes import STAGE, Cause, failure_causes, passage_relevance
from evaluators.evaluate import a_evaluate, a_evaluate_case, evaluate
from evaluators.images import image_positions
from evaluators.judges.accounting import CallRecord, Price
from evaluators.judges.base import Judge, JudgeError, JudgeInfo, Usage
from evaluators.metrics import (
    AnswerCorrectness,
    AnswerRelevancy,
    AnswerRelevancySimilarity,
    AnswerSimilarity,
    AspectCritique,
    Bias,
    ContextEntityRecall,
    ContextualPrecision,
    ContextualRecall,
    ContextualRelevancy,
    ContextUtilization,
    ConversationCompleteness,
    ConversationRelevancy,
    Faithfulness,
    GEval,
    Hallucination,
    Harmfulness,
    KnowledgeRetention,
    Metric,
    NoiseSensitivity,
    Refusal,
    Stereotyping,
    Toxicity,
    about_images,
    create_metric,
    metric_names,
    required_inputs,
)
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
    "AnswerCorrectness",
    "AnswerRelevancy",
    "AnswerRelevancySimilarity",
    "AnswerSimilarity",
    "AspectCritique",
    "Bias",
    "CallRecord",
    "CaseField",
    "CaseResult",
    "Cause",
    "ContextEntityRecall",
    "ContextUtilization",
    "ContextualPrecision",
    "ContextualRecall",
    "ContextualRelevancy",
    "ConversationCompleteness",
    "ConversationRelevancy",
    "CustomMetrics",
    "CustomMetricsError",
    "EvaluationResult",
    "Faithfulness",
    "GEval",
    "Hallucination",
    "Harmfulness",
    "Judge",
    "JudgeError",
    "JudgeInfo",
    "KnowledgeRetention",
    "Metric",
    "MetricResult",
    "MetricSummary",
    "MissingFieldError",
    "NoiseSensitivity",
    "OpenAIJudge",
    "Outcome",
    "Price",
    "Refusal",
    "Stereotyping",
    "TestCase",
    "Toxicity",
    "Turn",
    "Usage",
    "VerdictRecord",
    "a_evaluate",
    "a_evaluate_case",
    "about_images",
    "assert_rag",
    "create_metric",
    "evaluate",
    "failure_causes",
    "image_positions",
    "is_refusal",
    "load_custom_metrics",
    "metric_names",
    "passage_relevance",
    "required_inputs",
]
