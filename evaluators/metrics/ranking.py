"""Retrieval ranking against reference document ids: hit rate, MRR, NDCG, average precision,
precision@k and recall@k.

When a dataset (or a trace, through `rag.reference_context_ids`) names the documents that should
have been retrieved, the retriever can be scored by plain arithmetic over ids: no judge call, no
tokens, the same number on every run. The formulas are LlamaIndex's RetrieverEvaluator metrics and
ragas' id-based context precision/recall (sources in docs/evaluators.md); the arithmetic lives in
`evaluators.scores`. Ids are compared as exact strings; a blank reference id names no document.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Unpack

from evaluators import scores
from evaluators.case import CaseField, TestCase
from evaluators.metrics.base import Metric, MetricOptions, Scored, listing, names_of
from evaluators.result import VerdictRecord
from evaluators.session import JudgeSession


class RankingMetric(Metric):
    """Shared flow: cut the retrieved ids at `k`, score them, and show each rank's id as a verdict.

    `k` (default: every retrieved id) is the cut-off of precision@k, recall@k, NDCG@k, ...; LlamaIndex
    leaves it to the retriever's `top_k`, which is the default here too.
    """

    required_fields = (CaseField.RETRIEVED_CONTEXT_IDS, CaseField.REFERENCE_CONTEXT_IDS)
    needs_judge = False

    def __init__(self, *, k: int | None = None, **options: Unpack[MetricOptions]) -> None:
        super().__init__(**options)
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ValueError(f"k must be a positive integer or None (all retrieved ids), got {k!r}")
        self.k = k

    @abstractmethod
    def formula(self, retrieved: Sequence[str], reference: frozenset[str]) -> float:
        """The score of the (cut) retrieved ids against the distinct, non-blank reference ids."""

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        retrieved = list(case.retrieved_context_ids or [])[: self.k]
        reference = frozenset(doc_id for doc_id in case.reference_context_ids or [] if doc_id.strip())
        score = self.formula(retrieved, reference)  # raises UndefinedScoreError on empty inputs
        relevance = scores.id_relevance(retrieved, reference)
        ranks = [k for k, relevant in enumerate(relevance, start=1) if relevant]
        missing = sorted(reference.difference(retrieved))
        cut = f"the first {len(retrieved)}" if self.k is not None else f"all {len(retrieved)}"
        reason = (
            f"reference ids at ranks {ranks} of {cut} retrieved"
            if ranks
            else f"no reference id among {cut} retrieved"
        )
        if missing:
            reason += f"; not retrieved: {listing(missing)}"
        first_rank: dict[str, int] = {}
        verdicts = []
        for k, (doc_id, relevant) in enumerate(zip(retrieved, relevance, strict=True), start=1):
            repeat = first_rank.setdefault(doc_id, k)
            verdicts.append(
                VerdictRecord(
                    kind="node",
                    item=doc_id,
                    verdict="yes" if relevant else "no",
                    reason=f"repeats rank {repeat}" if repeat != k else "",
                    check="in_reference",
                )
            )
        details = {"k": self.k, "relevant_ranks": ranks, "missing_reference_ids": missing}
        return Scored(score, reason, verdicts, details)


class RetrievalHitRate(RankingMetric):
    """1 when any of the first k retrieved ids is a reference id, else 0.

    Source: LlamaIndex `HitRate` (default, non-granular mode). Averaged over cases it is the share of
    questions whose retrieval found at least one right document.
    """

    name = "retrieval_hit_rate"

    def formula(self, retrieved: Sequence[str], reference: frozenset[str]) -> float:
        return scores.hit_rate(scores.id_relevance(retrieved, reference))


class RetrievalMRR(RankingMetric):
    """1 / rank of the first reference id among the first k retrieved; 0 when none is there.

    Source: LlamaIndex `MRR` (default mode). Averaged over cases it is the mean reciprocal rank.
    """

    name = "retrieval_mrr"

    def formula(self, retrieved: Sequence[str], reference: frozenset[str]) -> float:
        return scores.reciprocal_rank(scores.id_relevance(retrieved, reference))


class RetrievalNDCG(RankingMetric):
    """DCG / IDCG with binary relevance: DCG = sum_i r_i / log2(i + 1) over the n ranked ids (at most
    k); IDCG is the same sum with min(n, |reference|) reference ids ranked first.

    Source: LlamaIndex `NDCG` (linear mode; the ideal length min(retrieved, expected) since PR #17126).
    A repeated id gains nothing at its repeat, so the score stays within [0, 1].
    """

    name = "retrieval_ndcg"

    def formula(self, retrieved: Sequence[str], reference: frozenset[str]) -> float:
        return scores.ndcg(scores.id_relevance(retrieved, reference), len(reference))


class RetrievalAveragePrecision(RankingMetric):
    """(1 / |reference|) * sum over ranks k holding a reference id of (reference ids in the first k) / k.

    Source: LlamaIndex `AveragePrecision` ("ap"). Unlike contextual precision, which divides by the
    relevant nodes found, it divides by all reference ids, so a document never retrieved costs score.
    """

    name = "retrieval_average_precision"

    def formula(self, retrieved: Sequence[str], reference: frozenset[str]) -> float:
        return scores.average_precision(scores.id_relevance(retrieved, reference), len(reference))


class RetrievalPrecisionAtK(RankingMetric):
    """|distinct retrieved ids in the first k ∩ reference ids| / |distinct retrieved ids in the first k|.

    Source: LlamaIndex `Precision` and ragas `IDBasedContextPrecision` (`id_based_context_precision`):
    the same arithmetic over sets, so repeated ids count once.
    """

    name = "retrieval_precision_at_k"

    def formula(self, retrieved: Sequence[str], reference: frozenset[str]) -> float:
        return scores.id_precision(retrieved, reference)


class RetrievalRecallAtK(RankingMetric):
    """|reference ids ∩ distinct retrieved ids in the first k| / |reference ids|.

    Source: LlamaIndex `Recall` and ragas `IDBasedContextRecall` (`id_based_context_recall`): the same
    arithmetic over sets.
    """

    name = "retrieval_recall_at_k"

    def formula(self, retrieved: Sequence[str], reference: frozenset[str]) -> float:
        return scores.id_recall(retrieved, reference)


RANKING_METRICS = names_of(
    RetrievalHitRate,
    RetrievalMRR,
    RetrievalNDCG,
    RetrievalAveragePrecision,
    RetrievalPrecisionAtK,
    RetrievalRecallAtK,
)  # the names, in this order, for tables and benchmarks
