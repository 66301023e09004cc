"""One class per metric, grouped by family; arithmetic lives in `evaluators.scores`."""

from evaluators.metrics.base import Metric, Scored
from evaluators.metrics.citations import CitationCoverage, CitationPrecision
from evaluators.metrics.conversation import (
    ConversationCompleteness,
    ConversationRelevancy,
    KnowledgeRetention,
)
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
from evaluators.metrics.multimodal import MultimodalFaithfulness, MultimodalRelevance
from evaluators.metrics.pairwise import PairwisePreference
from evaluators.metrics.quality_rubrics import Completeness, Helpfulness, LogicalCoherence
from evaluators.metrics.ranking import (
    RankingMetric,
    RetrievalAveragePrecision,
    RetrievalHitRate,
    RetrievalMRR,
    RetrievalNDCG,
    RetrievalPrecisionAtK,
    RetrievalRecallAtK,
)
from evaluators.metrics.refusal import Refusal
from evaluators.metrics.registry import about_images, create_metric, metric_names, required_inputs
from evaluators.metrics.relevancy import AnswerRelevancy, AnswerRelevancySimilarity
from evaluators.metrics.retrieval import (
    ContextEntityRecall,
    ContextualPrecision,
    ContextualRecall,
    ContextualRelevancy,
    ContextUtilization,
)
from evaluators.metrics.safety import Bias, Harmfulness, Stereotyping, Toxicity

__all__ = [
    "AnswerCorrectness",
    "AnswerRelevancy",
    "AnswerRelevancySimilarity",
    "AnswerSimilarity",
    "AspectCritique",
    "Bias",
    "CitationCoverage",
    "CitationPrecision",
    "ClaimContextUtilization",
    "ClaimF1",
    "ClaimHallucination",
    "ClaimPrecision",
    "ClaimRecall",
    "Completeness",
    "ContextEntityRecall",
    "ContextUtilization",
    "ContextualPrecision",
    "ContextualRecall",
    "ContextualRelevancy",
    "ConversationCompleteness",
    "ConversationRelevancy",
    "Faithfulness",
    "GEval",
    "Hallucination",
    "Harmfulness",
    "Helpfulness",
    "KnowledgeRetention",
    "LogicalCoherence",
    "Metric",
    "MultimodalFaithfulness",
    "MultimodalRelevance",
    "NoiseSensitivity",
    "PairwisePreference",
    "RankingMetric",
    "Refusal",
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
    "Stereotyping",
    "Toxicity",
    "about_images",
    "create_metric",
    "metric_names",
    "required_inputs",
]
