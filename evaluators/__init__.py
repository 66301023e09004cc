"""ragpulse evaluators: RAG metrics (faithfulness, relevancy, retrieval quality, ...) as a library.

    from evaluators import Faithfulness, OpenAIJudge, TestCase, evaluate

Imports nothing from `collector`; usable on its own like ragas or deepeval.
"""

from evaluators.case import CaseField, MissingFieldError, TestCase
from evaluators.causes import STAGE, Cause, failure_causes, is_refusal, passage_relevance
from evaluators.evaluate import a_evaluate, a_evaluate_case, evaluate
from evaluators.judges.accounting import CallRecord, Price
from evaluators.judges.base import Judge, JudgeError, JudgeInfo, Usage
from evaluators.judges.openai_judge import OpenAIJudge
from evaluators.metrics import (
    AnswerCorrectness,
    AnswerRelevancy,
    AnswerRelevancySimilarity,
    AnswerSimilarity,
    AspectCritique,
    ContextEntityRecall,
    ContextualPrecision,
    ContextualRecall,
    ContextualRelevancy,
    ContextUtilization,
    Faithfulness,
    GEval,
    Hallucination,
    Metric,
    NoiseSensitivity,
    create_metric,
    metric_names,
    required_inputs,
)
from evaluators.metrics.custom import CustomMetrics, CustomMetricsError, load_custom_metrics
from evaluators.result import (
    CaseResult,
    EvaluationResult,
    MetricResult,
    MetricSummary,
    Outcome,
    VerdictRecord,
)
from evaluators.testing import assert_rag

__all__ = [
    "STAGE",
    "AnswerCorrectness",
    "AnswerRelevancy",
    "AnswerRelevancySimilarity",
    "AnswerSimilarity",
    "AspectCritique",
    "CallRecord",
    "CaseField",
    "CaseResult",
    "Cause",
    "ContextEntityRecall",
    "ContextUtilization",
    "ContextualPrecision",
    "ContextualRecall",
    "ContextualRelevancy",
    "CustomMetrics",
    "CustomMetricsError",
    "EvaluationResult",
    "Faithfulness",
    "GEval",
    "Hallucination",
    "Judge",
    "JudgeError",
    "JudgeInfo",
    "Metric",
    "MetricResult",
    "MetricSummary",
    "MissingFieldError",
    "NoiseSensitivity",
    "OpenAIJudge",
    "Outcome",
    "Price",
    "TestCase",
    "Usage",
    "VerdictRecord",
    "a_evaluate",
    "a_evaluate_case",
    "assert_rag",
    "create_metric",
    "evaluate",
    "failure_causes",
    "is_refusal",
    "load_custom_metrics",
    "metric_names",
    "passage_relevance",
    "required_inputs",
]
