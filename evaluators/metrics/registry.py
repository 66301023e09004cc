"""Metrics by their stable names, for the CLI and the collector's config.

Names are deepeval's where the two libraries differ (`contextual_precision`); ragas' names are accepted as
aliases (`context_precision`), as are RAGChecker's with a `ragchecker_` prefix; custom criteria
(`evaluators.metrics.custom`) join under their own names.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from evaluators.case import CaseField
from evaluators.metrics import (
    citations,
    conversation,
    correctness,
    diagnostics,
    faithfulness,
    multimodal,
    pairwise,
    quality_rubrics,
    ranking,
    refusal,
    relevancy,
    retrieval,
    safety,
)
from evaluators.metrics.base import Metric
from evaluators.metrics.critique import BUILTIN_ASPECTS, AspectCritique
from evaluators.metrics.custom_specs import CustomMetrics, check_names

METRIC_FACTORIES: dict[str, type[Metric]] = {
    "faithfulness": faithfulness.Faithfulness,
    "hallucination": faithfulness.Hallucination,
    "answer_relevancy": relevancy.AnswerRelevancy,
    "answer_relevancy_similarity": relevancy.AnswerRelevancySimilarity,
    "contextual_precision": retrieval.ContextualPrecision,
    "contextual_recall": retrieval.ContextualRecall,
    "contextual_relevancy": retrieval.ContextualRelevancy,
    "context_utilization": retrieval.ContextUtilization,
    "context_entity_recall": retrieval.ContextEntityRecall,
    "noise_sensitivity": correctness.NoiseSensitivity,
    "answer_similarity": correctness.AnswerSimilarity,
    "answer_correctness": correctness.AnswerCorrectness,
    "retrieval_hit_rate": ranking.RetrievalHitRate,
    "retrieval_mrr": ranking.RetrievalMRR,
    "retrieval_ndcg": ranking.RetrievalNDCG,
    "retrieval_average_precision": ranking.RetrievalAveragePrecision,
    "retrieval_precision_at_k": ranking.RetrievalPrecisionAtK,
    "retrieval_recall_at_k": ranking.RetrievalRecallAtK,
    "citation_precision": citations.CitationPrecision,
    "citation_coverage": citations.CitationCoverage,
    "knowledge_retention": conversation.KnowledgeRetention,
    "conversation_relevancy": conversation.ConversationRelevancy,
    "conversation_completeness": conversation.ConversationCompleteness,
    "pairwise_preference": pairwise.PairwisePreference,
    "refusal": refusal.Refusal,
    "bias": safety.Bias,
    "toxicity": safety.Toxicity,
    "harmfulness": safety.Harmfulness,
    "stereotyping": safety.Stereotyping,
    "multimodal_faithfulness": multimodal.MultimodalFaithfulness,
    "multimodal_relevance": multimodal.MultimodalRelevance,
    "helpfulness": quality_rubrics.Helpfulness,
    "completeness": quality_rubrics.Completeness,
    "logical_coherence": quality_rubrics.LogicalCoherence,
    "claim_precision": diagnostics.ClaimPrecision,
    "claim_recall": diagnostics.ClaimRecall,
    "claim_f1": diagnostics.ClaimF1,
    "retriever_claim_recall": diagnostics.RetrieverClaimRecall,
    "retriever_context_precision": diagnostics.RetrieverContextPrecision,
    "claim_context_utilization": diagnostics.ClaimContextUtilization,
    "claim_hallucination": diagnostics.ClaimHallucination,
    "self_knowledge": diagnostics.SelfKnowledge,
}

# ragas' names (v0.1 and v0.2+), and RAGChecker's (prefixed, as its bare names clash), for the same
# arithmetic.
ALIASES: dict[str, str] = {
    "context_precision": "contextual_precision",
    "llm_context_precision_with_reference": "contextual_precision",
    "context_recall": "contextual_recall",
    "llm_context_recall": "contextual_recall",
    "context_relevancy": "contextual_relevancy",
    "context_relevance": "contextual_relevancy",
    "response_relevancy": "answer_relevancy",
    "semantic_similarity": "answer_similarity",
    "noise_sensitivity_relevant": "noise_sensitivity",
    "llm_context_precision_without_reference": "context_utilization",
    "id_based_context_precision": "retrieval_precision_at_k",
    "id_based_context_recall": "retrieval_recall_at_k",
    "citation_recall": "citation_coverage",  # ALCE's name for the same question
    "pairwise_string": "pairwise_preference",  # LangChain
    "pairwise_comparison": "pairwise_preference",  # LlamaIndex
    "stereotypes": "stereotyping",  # TruLens' name for the same criterion
    # LlamaIndex's MultiModalFaithfulnessEvaluator / MultiModalRelevancyEvaluator
    "multimodal_relevancy": "multimodal_relevance",
    "multi_modal_faithfulness": "multimodal_faithfulness",
    "multi_modal_relevancy": "multimodal_relevance",
    "ragchecker_precision": "claim_precision",
    "ragchecker_recall": "claim_recall",
    "ragchecker_f1": "claim_f1",
    "ragchecker_claim_recall": "retriever_claim_recall",
    "ragchecker_context_precision": "retriever_context_precision",
    "ragchecker_context_utilization": "claim_context_utilization",
    "ragchecker_hallucination": "claim_hallucination",
    "ragchecker_self_knowledge": "self_knowledge",
    "ragchecker_faithfulness": "faithfulness",  # the same request and count (docs/evaluators.md)
    # the same question under the other seed systems' names
    "groundedness": "faithfulness",  # TruLens' RAG triad, LangSmith's RAG evaluators
    "retrieval_relevance": "contextual_relevancy",  # LangSmith
    "context_coverage": "contextual_recall",  # Bedrock: ground-truth statements the context covers
    "factual_correctness": "claim_f1",  # ragas FactualCorrectness (mode f1): claims vs the reference
    "noise_sensitivity_irrelevant": "noise_sensitivity",
    "ragchecker_noise_sensitivity_in_relevant": "noise_sensitivity",
    "ragchecker_noise_sensitivity_in_irrelevant": "noise_sensitivity",
}
# Aliases that name a variant of their metric: the options they stand for (an explicit option wins).
ALIAS_OPTIONS: dict[str, dict[str, Any]] = {
    "noise_sensitivity_relevant": {"mode": "relevant"},
    "noise_sensitivity_irrelevant": {"mode": "irrelevant"},
    "ragchecker_noise_sensitivity_in_relevant": {"mode": "relevant"},
    "ragchecker_noise_sensitivity_in_irrelevant": {"mode": "irrelevant"},
}


def _aspect(name: str) -> str | None:
    key = name.removeprefix("aspect_")
    return key if name.startswith("aspect_") and key in BUILTIN_ASPECTS else None


def builtin_names() -> list[str]:
    return [*METRIC_FACTORIES, *(f"aspect_{name}" for name in BUILTIN_ASPECTS)]


def metric_names(custom: CustomMetrics | None = None) -> list[str]:
    return [*builtin_names(), *(custom or {})]


def canonical_name(name: str) -> str:
    """deepeval's name for a ragas alias; any other name unchanged."""
    return ALIASES.get(name, name)


def check_custom(custom: CustomMetrics) -> None:
    """Custom names must not shadow a built-in metric or alias (raises CustomMetricsError)."""
    check_names(custom, {*builtin_names(), *ALIASES})


def unknown_metric(name: str, custom: CustomMetrics | None = None) -> ValueError:
    known = [*metric_names(custom), *ALIASES]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ValueError(f"unknown metric {name!r}{hint}; known: {', '.join(metric_names(custom))}")


def check_known(names: Iterable[str], custom: CustomMetrics | None = None) -> None:
    for name in names:
        if canonical_name(name) not in metric_names(custom):
            raise unknown_metric(name, custom)


def required_inputs(name: str, custom: CustomMetrics | None = None) -> tuple[CaseField, ...]:
    """The test-case fields the metric `name` needs, as it declares them (without making it)."""
    name = canonical_name(name)
    if name in METRIC_FACTORIES:
        return METRIC_FACTORIES[name].required_fields
    if _aspect(name):
        return AspectCritique.required_fields
    if custom and name in custom:
        spec = custom[name]
        return tuple(getattr(spec, "evaluation_params", AspectCritique.required_fields))
    raise unknown_metric(name, custom)


def judged_offline(name: str) -> bool:
    """Whether the offline judge can judge metric `name` (a cascade sends the others straight to the
    LLM judge). Aspects and custom criteria never; built-ins as their class declares."""
    factory = METRIC_FACTORIES.get(canonical_name(name))
    return factory is not None and factory.judged_offline


def about_images(name: str) -> bool:
    """Whether metric `name` is about images (scored by the sidecar only where a record has one)."""
    factory = METRIC_FACTORIES.get(canonical_name(name))
    return factory is not None and factory.about_images


def create_metric(name: str, *, custom: Mapping[str, Any] | None = None, **options: Any) -> Metric:
    """A metric from its stable name (or an alias, which may name a variant: `noise_sensitivity_relevant`
    is `mode="relevant"`; or a custom metric in `custom`); options go to its constructor (threshold,
    strict_mode, ...)."""
    canonical = canonical_name(name)
    if canonical in METRIC_FACTORIES:
        return METRIC_FACTORIES[canonical](**(ALIAS_OPTIONS.get(name, {}) | options))
    aspect = _aspect(canonical)
    if aspect:
        return AspectCritique(aspect, **options)
    if custom and name in custom:
        metric: Metric = custom[name].build(name, **options)
        return metric
    raise unknown_metric(name, dict(custom or {}))
