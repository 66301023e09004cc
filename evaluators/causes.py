"""Why an evaluation failed, from the verdicts already computed: no judge call, no extra cost.

A failed score alone does not say whom to call. The verdicts of all the metrics of one case do:
passages that answer nothing point at the retriever, a claim a passage contradicts at the generator.
`failure_causes` names one cause per failed metric; `STAGE` says which owner each cause belongs to
(alerts route on it). `passage_relevance` is the per-passage view both the causes and the page use.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from evaluators.case import TestCase
from evaluators.refusals import is_refusal
from evaluators.result import UNJUDGED, MetricResult, Outcome, verdict_passages


class Cause(StrEnum):
    NO_CONTEXT = "no_context"  # nothing was retrieved, or only empty passages
    IRRELEVANT_CONTEXT = "irrelevant_context"  # passages were retrieved, none relevant to the question
    INCOMPLETE_CONTEXT = "incomplete_context"  # the context lacks what the reference answer needs
    UNSUPPORTED_CLAIM = "unsupported_claim"  # a claim the (relevant) context does not state
    CONTRADICTED_CLAIM = "contradicted_claim"  # a claim a passage contradicts
    OFF_TOPIC = "off_topic"  # the answer does not address the question
    REFUSAL = "refusal"  # the answer declines (though the context held the answer, when `refusal` checked)
    INCORRECT_ANSWER = "incorrect_answer"  # differs from the reference answer
    CRITERIA = "criteria"  # a custom criterion (G-Eval, aspect critique) failed
    UNKNOWN = "unknown"


# The details key a criterion metric (G-Eval, aspect critique) sets on its result: a custom criterion is
# named freely in the config, so its failure is recognised by its kind, never by its name.
CRITERION = "criterion"

STAGE: dict[Cause, str] = {
    Cause.NO_CONTEXT: "retrieval",
    Cause.IRRELEVANT_CONTEXT: "retrieval",
    Cause.INCOMPLETE_CONTEXT: "retrieval",
    Cause.UNSUPPORTED_CLAIM: "generation",
    Cause.CONTRADICTED_CLAIM: "generation",
    Cause.OFF_TOPIC: "generation",
    Cause.REFUSAL: "generation",
    Cause.INCORRECT_ANSWER: "generation",
    Cause.CRITERIA: "generation",
    Cause.UNKNOWN: "unknown",
}

# Ranking against reference ids counts too: a low hit rate or MRR is the retriever's, by arithmetic.
_RETRIEVAL_METRICS = frozenset(
    {
        "contextual_relevancy",
        "contextual_precision",
        "context_utilization",
        "retriever_context_precision",
        "retrieval_hit_rate",
        "retrieval_mrr",
        "retrieval_ndcg",
        "retrieval_average_precision",
        "retrieval_precision_at_k",
    }
)
_COMPLETENESS_METRICS = frozenset(
    {"contextual_recall", "context_entity_recall", "retriever_claim_recall", "retrieval_recall_at_k"}
)
_CITATION_METRICS = frozenset({"citation_precision", "citation_coverage"})
# The multi-modal verdicts ask whether the response is supported by / in line with the context: a
# failure is a grounding failure, whose cause the other verdicts of the case tell as for faithfulness.
_GROUNDING_METRICS = frozenset(
    {
        "faithfulness",
        "hallucination",
        "claim_hallucination",
        "self_knowledge",
        "multimodal_faithfulness",
        "multimodal_relevance",
    }
)
# Against the reference answer, claim by claim (RAGChecker); utilization: reference facts that were
# retrieved but left out of the answer.
_CORRECTNESS_METRICS = frozenset(
    {
        "answer_correctness",
        "answer_similarity",
        "claim_precision",
        "claim_recall",
        "claim_f1",
        "claim_context_utilization",
    }
)
_RELEVANCY_METRICS = frozenset({"answer_relevancy", "answer_relevancy_similarity"})
_REFUSAL_METRICS = _GROUNDING_METRICS | _RELEVANCY_METRICS | {"context_utilization"}
# Judged criteria: the named safety and quality ones, a conversation's, the preference between two runs.
_CRITERIA_METRICS = frozenset(
    {
        "bias",
        "toxicity",
        "harmfulness",
        "stereotyping",
        "knowledge_retention",
        "conversation_completeness",
        "pairwise_preference",
        "helpfulness",
        "completeness",
        "logical_coherence",
    }
)


def passage_relevance(results: Sequence[MetricResult], passages: int) -> list[str | None]:
    """Per retrieved passage: "relevant", "irrelevant" or None (no metric judged it).

    Contextual relevancy judges the statements of each passage against the question (a passage with one
    relevant statement is relevant); contextual precision judges whole passages against the reference
    answer, and retriever context precision asks whether a passage entails a reference claim. Context
    utilization is left out: a passage the answer did not use may still be relevant (an off-topic
    answer ignores good passages).
    """
    verdicts: list[list[bool]] = [[] for _ in range(passages)]
    for result in results:
        for verdict, targets in zip(result.verdicts, verdict_passages(result.verdicts), strict=True):
            if verdict.verdict == UNJUDGED:  # the judge gave no verdict: neither relevant nor irrelevant
                continue
            if verdict.check == "relevant" and verdict.kind == "statement":
                is_relevant = verdict.verdict != "no"
            elif (verdict.check == "useful" and result.name == "contextual_precision") or (
                verdict.check == "entails_reference_claim"
            ):
                is_relevant = verdict.verdict == "yes"
            else:
                continue
            for index in targets:
                if index < passages:
                    verdicts[index].append(is_relevant)
    return [None if not judged else ("relevant" if any(judged) else "irrelevant") for judged in verdicts]


def failure_causes(case: TestCase, results: Sequence[MetricResult]) -> dict[str, Cause]:
    """The cause of each failed result, by metric name (results that did not fail have none)."""
    passages = [p for p in case.retrieval_context or [] if p.strip()]
    relevance = passage_relevance(results, len(case.retrieval_context or []))
    judged = [r for r in relevance if r is not None]
    context_irrelevant = bool(judged) and "relevant" not in judged
    judged_refusal = next((r for r in results if r.name == "refusal" and r.score is not None), None)
    if judged_refusal is not None:  # the refusal metric's verdict, when it ran, over the phrasings
        refusal = judged_refusal.details.get("refused") is True
    else:
        refusal = is_refusal(case.actual_output or "") or any(
            r.details.get("noncommittal") is True for r in results
        )
    refusal_cause = _refusal_cause(judged_refusal, context_irrelevant)
    off_topic = any(r.name in _RELEVANCY_METRICS and r.outcome is Outcome.FAILED for r in results)
    causes: dict[str, Cause] = {}
    for result in results:
        if result.outcome is not Outcome.FAILED:
            continue
        name = result.name
        contradicted = any(v.label == "contradicted" for v in result.verdicts)
        if name in _COMPLETENESS_METRICS:
            cause = Cause.NO_CONTEXT if not passages else Cause.INCOMPLETE_CONTEXT
        elif not passages and (name in _RETRIEVAL_METRICS or name in _GROUNDING_METRICS or name == "refusal"):
            cause = Cause.NO_CONTEXT
        elif name == "refusal" or (refusal and name in _REFUSAL_METRICS):
            cause = refusal_cause
        elif name == "context_utilization" and not context_irrelevant:  # good passages, left unused
            cause = Cause.OFF_TOPIC if off_topic else Cause.UNSUPPORTED_CLAIM
        elif name in _RETRIEVAL_METRICS:
            cause = Cause.IRRELEVANT_CONTEXT
        elif name in _GROUNDING_METRICS or name.startswith("noise_sensitivity"):
            if contradicted:
                cause = Cause.CONTRADICTED_CLAIM
            elif context_irrelevant:
                cause = Cause.IRRELEVANT_CONTEXT
            elif off_topic:  # not an invented fact about the question: an answer to another one
                cause = Cause.OFF_TOPIC
            else:
                cause = Cause.UNSUPPORTED_CLAIM
        elif name in _RELEVANCY_METRICS or name == "conversation_relevancy":
            cause = Cause.OFF_TOPIC
        elif name in _CITATION_METRICS:
            cause = Cause.CONTRADICTED_CLAIM if contradicted else Cause.UNSUPPORTED_CLAIM
        elif name in _CORRECTNESS_METRICS:
            cause = Cause.CONTRADICTED_CLAIM if contradicted else Cause.INCORRECT_ANSWER
        elif result.details.get(CRITERION) or name in _CRITERIA_METRICS:
            cause = Cause.CRITERIA
        else:
            cause = Cause.UNKNOWN
        causes[name] = cause
    return causes


def _refusal_cause(refusal: MetricResult | None, context_irrelevant: bool) -> Cause:
    """Whose failure a refusal is: the generator's when the context held the answer (or nobody checked),
    the retriever's when the refusal metric found the context without it (declining was right)."""
    if refusal is None or refusal.details.get("context_has_answer") is not False:
        return Cause.REFUSAL
    return Cause.IRRELEVANT_CONTEXT if context_irrelevant else Cause.INCOMPLETE_CONTEXT
