"""One class per metric, grouped by family; arithmetic lives in `evaluators.scores`."""

from evaluators.metrics.base import Metric, Scored
from evaluators.metrics.citations import CitationCoverage, CitationPrecision
from evaluators.metrics.correctness import AnswerCorrectness, AnswerSimilarity, NoiseSensitivity
from evaluators.metrics.critique import AspectCritique, GEval
from evaluators.metrics.faithfulness import Faithfulness, Hallucination
from evaluators.metrics.multimodal import MultimodalFaithfulness, MultimodalRelevance
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
    "ContextEntityRecall",
    "ContextUtilization",
    "ContextualPrecision",
    "ContextualRecall",
    "ContextualRelevancy",
    "Faithfulness",
    "GEval",
    "Hallucination",
    "Metric",
    "MultimodalFaithfulness",
    "MultimodalRelevance",
    "NoiseSensitivity",
    "RankingMetric",
    "RetrievalAveragePrecision",
    "RetrievalHitRate",
    "RetrievalMRR",
    "RetrievalNDCG",
    "RetrievalPrecisionAtK",
    "RetrievalRecallAtK",
    "Scored",
    "create_metric",
    "metric_names",
    "required_inputs",
]
