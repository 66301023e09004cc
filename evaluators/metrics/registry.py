"""Metrics by their stable names, for the CLI and the collector's config."""

from __future__ import annotations

from typing import Any

from evaluators.case import CaseField
from evaluators.metrics.base import Metric
from evaluators.metrics.correctness import AnswerCorrectness, AnswerSimilarity, NoiseSensitivity
from evaluators.metrics.critique import BUILTIN_ASPECTS, AspectCritique
from evaluators.metrics.faithfulness import Faithfulness, Hallucination
from evaluators.metrics.relevancy import AnswerRelevancy, AnswerRelevancySimilarity
from evaluators.metrics.retrieval import (
    ContextEntityRecall,
    ContextualPrecision,
    ContextualRecall,
    ContextualRelevancy,
    ContextUtilization,
)

METRIC_FACTORIES: dict[str, type[Metric]] = {
    "faithfulness": Faithfulness,
    "hallucination": Hallucination,
    "answer_relevancy": AnswerRelevancy,
    "answer_relevancy_similarity": AnswerRelevancySimilarity,
    "contextual_precision": ContextualPrecision,
    "contextual_recall": ContextualRecall,
    "contextual_relevancy": ContextualRelevancy,
    "context_utilization": ContextUtilization,
    "context_entity_recall": ContextEntityRecall,
    "noise_sensitivity": NoiseSensitivity,
    "answer_similarity": AnswerSimilarity,
    "answer_correctness": AnswerCorrectness,
}


def metric_names() -> list[str]:
    return [*METRIC_FACTORIES, *(f"aspect_{name}" for name in BUILTIN_ASPECTS)]


def required_inputs(name: str) -> tuple[CaseField, ...]:
    """The test-case fields the metric `name` needs, as it declares them (without making it)."""
    if name in METRIC_FACTORIES:
        return METRIC_FACTORIES[name].required_fields
    if name.startswith("aspect_") and name.removeprefix("aspect_") in BUILTIN_ASPECTS:
        return AspectCritique.required_fields
    raise ValueError(f"unknown metric {name!r}; known: {', '.join(metric_names())}")


def create_metric(name: str, **options: Any) -> Metric:
    """A metric from its stable name; options go to its constructor (threshold, strict_mode, ...)."""
    if name in METRIC_FACTORIES:
        return METRIC_FACTORIES[name](**options)
    if name.startswith("aspect_") and name.removeprefix("aspect_") in BUILTIN_ASPECTS:
        return AspectCritique(name.removeprefix("aspect_"), **options)
    raise ValueError(f"unknown metric {name!r}; known: {', '.join(metric_names())}")
