"""The arithmetic of every metric: pure functions from verdicts to floats.

Kept apart from the judges so that each formula of METRICS.md is unit-tested on fixed verdicts.
A formula that is undefined for its input (no claims, no expected entities, a zero vector) raises
`UndefinedScoreError` instead of returning NaN; metrics turn that into an "unmeasured" result.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence


class UndefinedScoreError(ValueError):
    """The score cannot be determined from these inputs (e.g. nothing to count)."""


def verdict_ratio(verdicts: Sequence[bool]) -> float:
    """Share of positive verdicts: faithfulness, recall, relevancy, hallucination, noise sensitivity."""
    if not verdicts:
        raise UndefinedScoreError("no verdicts to count")
    return sum(1 for verdict in verdicts if verdict) / len(verdicts)


def contextual_precision(relevance: Sequence[bool]) -> float:
    """Mean precision@k over the ranks k of relevant nodes; no relevant node gives 0 (METRICS.md)."""
    total, relevant = _precisions_at_hits(relevance)
    return total / relevant if relevant else 0.0


def _precisions_at_hits(relevance: Sequence[bool]) -> tuple[float, int]:
    """The sum of precision@k over the relevant ranks k, and how many ranks are relevant: the two
    averages of precision (over the relevant nodes, over the reference ids) divide it differently."""
    found = 0
    total = 0.0
    for k, relevant in enumerate(relevance, start=1):
        if relevant:
            found += 1
            total += found / k
    return total, found


def normalise_entity(entity: str) -> str:
    return " ".join(entity.casefold().split())


def context_entity_recall(expected: Collection[str], found: Collection[str]) -> float:
    """|CE ∩ GE| / |GE|, entities compared case- and whitespace-insensitively."""
    expected_set = {normalise_entity(e) for e in expected if e.strip()}
    if not expected_set:
        raise UndefinedScoreError("the expected output names no entities")
    found_set = {normalise_entity(e) for e in found if e.strip()}
    return len(expected_set & found_set) / len(expected_set)


def factual_f1(tp: int, fp: int, fn: int) -> float:
    """|TP| / (|TP| + 0.5 (|FP| + |FN|)), the statement-level F1 of answer correctness."""
    if min(tp, fp, fn) < 0:
        raise ValueError("statement counts cannot be negative")
    if tp + fp + fn == 0:
        raise UndefinedScoreError("neither the answer nor the expected output has statements")
    return tp / (tp + 0.5 * (fp + fn))


def answer_correctness(
    tp: int, fp: int, fn: int, similarity: float, weights: tuple[float, float] = (0.75, 0.25)
) -> float:
    """Weighted average of factual F1 and semantic similarity (ragas' weights by default)."""
    f1_weight, similarity_weight = weights
    if f1_weight < 0 or similarity_weight < 0 or f1_weight + similarity_weight == 0:
        raise ValueError("weights must be non-negative and not both zero")
    f1 = factual_f1(tp, fp, fn)
    return (f1_weight * f1 + similarity_weight * similarity) / (f1_weight + similarity_weight)


def harmonic_mean(scores: Sequence[float]) -> float:
    """Harmonic mean; any zero makes it zero, which is the point of ragas_score."""
    if not scores:
        raise UndefinedScoreError("no scores to aggregate")
    if any(score < 0 for score in scores):
        raise ValueError("the harmonic mean is undefined for negative scores")
    if any(score == 0 for score in scores):
        return 0.0
    return len(scores) / sum(1.0 / score for score in scores)


def geval_weighted(score_probabilities: Mapping[int, float]) -> float:
    """Probability-weighted score (G-Eval paper): sum(s * p(s)) / sum(p(s))."""
    mass = sum(p for p in score_probabilities.values() if p > 0)
    if mass <= 0:
        raise UndefinedScoreError("no probability mass on any score")
    return sum(score * p for score, p in score_probabilities.items() if p > 0) / mass


def normalise_range(score: float, low: int, high: int) -> float:
    """Map a rubric score in [low, high] onto [0, 1]."""
    if high <= low:
        raise ValueError("the rubric range must have high > low")
    return (min(max(score, low), high) - low) / (high - low)


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two vectors; may be negative and is reported as computed."""
    if len(a) != len(b):
        raise ValueError("vectors of different dimensions")
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    if norm == 0:
        raise UndefinedScoreError("a zero embedding vector has no direction")
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm


def mean(values: Sequence[float]) -> float:
    if not values:
        raise UndefinedScoreError("no values to average")
    return sum(values) / len(values)


def majority_vote(votes: Sequence[bool]) -> float:
    """1.0 when more than half the votes are yes (aspect critique's `strictness` votes)."""
    if not votes:
        raise UndefinedScoreError("no votes")
    return 1.0 if sum(votes) * 2 > len(votes) else 0.0


# --- retrieval ranking against reference document ids (no judge) -----------------------------------
# LlamaIndex's RetrieverEvaluator metrics and ragas' id-based context precision/recall; the sources and
# worked examples are in docs/evaluators.md.

_NO_RETRIEVED = "no retrieved context ids"
_NO_REFERENCE = "no reference context ids to compare against"


def id_relevance(retrieved: Sequence[str], reference: Collection[str]) -> list[bool]:
    """Per rank: a reference id seen for the first time. A repeated id gains nothing twice, which keeps
    NDCG and average precision within [0, 1] (LlamaIndex counts each repeat, and can exceed 1)."""
    _require((reference, _NO_REFERENCE), (retrieved, _NO_RETRIEVED))
    seen: set[str] = set()
    relevance = []
    for doc_id in retrieved:
        relevance.append(doc_id in reference and doc_id not in seen)
        seen.add(doc_id)
    return relevance


def hit_rate(relevance: Sequence[bool]) -> float:
    """1 when any retrieved id is a reference id, else 0."""
    return 1.0 if any(relevance) else 0.0


def reciprocal_rank(relevance: Sequence[bool]) -> float:
    """1 / rank of the first reference id; 0 when none was retrieved."""
    return next((1.0 / k for k, relevant in enumerate(relevance, start=1) if relevant), 0.0)


def ndcg(relevance: Sequence[bool], references: int) -> float:
    """Binary-relevance NDCG: sum_k r_k / log2(k + 1) over the ranks, divided by the same sum for an
    ideal ranking of min(ranks, references) reference ids first."""
    if references < 1:
        raise UndefinedScoreError(_NO_REFERENCE)
    dcg = sum(1.0 / math.log2(k + 1) for k, relevant in enumerate(relevance, start=1) if relevant)
    ideal = sum(1.0 / math.log2(k + 1) for k in range(1, min(len(relevance), references) + 1))
    if ideal == 0:
        raise UndefinedScoreError(_NO_RETRIEVED)
    return dcg / ideal


def average_precision(relevance: Sequence[bool], references: int) -> float:
    """sum over the ranks k of reference ids of (reference ids in the first k / k), divided by the number
    of reference ids (so a reference id never retrieved counts as 0)."""
    if references < 1:
        raise UndefinedScoreError(_NO_REFERENCE)
    return _precisions_at_hits(relevance)[0] / references


def id_precision(retrieved: Collection[str], reference: Collection[str]) -> float:
    """|distinct retrieved ids ∩ reference ids| / |distinct retrieved ids|."""
    return _found_share((retrieved, _NO_RETRIEVED), (reference, _NO_REFERENCE))


def id_recall(retrieved: Collection[str], reference: Collection[str]) -> float:
    """|distinct retrieved ids ∩ reference ids| / |distinct reference ids|."""
    return _found_share((reference, _NO_REFERENCE), (retrieved, _NO_RETRIEVED))


def _found_share(ids: tuple[Collection[str], str], among: tuple[Collection[str], str]) -> float:
    """|distinct ids ∩ among| / |distinct ids|; each side, when empty, undefined with its own reason
    (the divisor's first)."""
    _require(ids, among)
    distinct = set(ids[0])
    return len(distinct & set(among[0])) / len(distinct)


def _require(*sides: tuple[Collection[str], str]) -> None:
    """Undefined, with the first empty side's reason, unless every side holds an id."""
    for ids, reason in sides:
        if not ids:
            raise UndefinedScoreError(reason)


def passes(score: float, threshold: float, lower_is_better: bool) -> bool:
    return score <= threshold if lower_is_better else score >= threshold


def strict_score(score: float, lower_is_better: bool) -> float:
    """strict_mode: only a perfect score counts (1 or 0; for lower-is-better metrics, 0 or 1)."""
    if lower_is_better:
        return 0.0 if score <= 0 else 1.0
    return 1.0 if score >= 1 else 0.0
