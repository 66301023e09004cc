"""One class per metric, grouped by family; arithmetic lives in `evaluators.scores`."""

from evaluators.metrics.base import Metric, Scored
from evaluators.metrics.citations import CitationCoverage, CitationPrecision
from evaluators.metrics.correctness import AnswerCorrectness, AnswerSimilarity, NoiseSensitivity
from evaluators.metrics.critique import AspectCritique, GEval
from evaluators.metrics.diagnostics import (
    ClaimContextUtilization,
    ClaimF1,
    ClaimHallucination,
    ClaimPrecision,
    ClaimRecall,
    RetrieverClaimRecall,
    RetrieverContextPrecision,
    SelfKnowledge,
)
from evaluators.metrics.faithfulness import Faithfulness, Hallucination
from evaluators.metrics.ranking import (
    RankingMetric,
    RetrievalAveragePrecision,
    RetrievalHitRate,
    RetrievalMRR,
    RetrievalNDCG,
    RetrievalPrecisionAtK,
    RetrievalRecallAtK,
)
from evaluators.metrics.registry import create_metric, metric_names, required_inputs
from evaluators.metrics.relevancy import AnswerRelevancy, AnswerRelevancySimilarity
from evaluators.metrics.retrieval import (
    ContextEntityRecall,
    ContextualPrecision,
    ContextualRecall,
    ContextualRelevancy,
    ContextUtilization,
)

__all__ = [
    "AnswerCorrectness",
    "AnswerRelevancy",
    "AnswerRelevancySimilarity",
    "AnswerSimilarity",
    "AspectCritique",
    "CitationCoverage",
    "CitationPrecision",
    "ClaimContextUtilization",
    "ClaimF1",
    "ClaimHallucination",
    "ClaimPrecision",
    "ClaimRecall",
    "ContextEntityRecall",
    "ContextUtilization",
    "ContextualPrecision",
    "ContextualRecall",
    "ContextualRelevancy",
    "Faithfulness",
    "GEval",
    "Hallucination",
    "Metric",
    "NoiseSensitivity",
    "RankingMetric",
    "RetrievalAveragePrecision",
    "RetrievalHitRate",
    "RetrievalMRR",
    "RetrievalNDCG",
    "RetrievalPrecisionAtK",
    "RetrievalRecallAtK",
    "RetrieverClaimRecall",
    "RetrieverContextPrecision",
    "Scored",
    "SelfKnowledge",
    "create_metric",
    "metric_names",
    "required_inputs",
]
