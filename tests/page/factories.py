"""Records and evaluations as the pipeline hands them to exporters, for the page's tests."""

from __future__ import annotations

import uuid

from collector.records import RagRecord, RetrievedNode
from collector.stages import Evaluation, Outcome
from evaluators import VerdictRecord

QUESTION = "When was the Eiffel Tower completed and how tall is it?"
PASSAGES = (
    "The Eiffel Tower was completed in March 1889 as the entrance arch to the 1889 World's Fair.",
    "The tower is 330 metres tall and was the tallest man-made structure until 1930.",
    "Gustave Eiffel's company designed and built the wrought-iron lattice tower.",
)
ANSWER = "The Eiffel Tower was completed in 1889. It is 512 metres tall."


def make_record(
    answer: str = ANSWER, service: str = "shop", route: str = "/ask", **fields: object
) -> RagRecord:
    values: dict[str, object] = {
        "trace_id": uuid.uuid4().hex,
        "anchor_span_id": uuid.uuid4().hex[:16],
        "query": QUESTION,
        "response": answer,
        "nodes": tuple(
            RetrievedNode(f"eiffel-{i}", text, round(0.9 - 0.1 * i, 2)) for i, text in enumerate(PASSAGES)
        ),
        "service": service,
        "route": route,
        "model": "gpt-4o-mini",
    }
    values.update(fields)
    return RagRecord(**values)  # type: ignore[arg-type]


def faithfulness(score: float = 0.5, contradicted_by: int = 1) -> Evaluation:
    """One supported claim (passage 0) and one contradicted by passage `contradicted_by`."""
    verdicts = (
        VerdictRecord(
            kind="claim",
            item="The Eiffel Tower was completed in 1889.",
            verdict="yes",
            check="supported",
            supporting_ids=[0],
            reason="the context says 1889",
        ),
        VerdictRecord(
            kind="claim",
            item="It is 512 metres tall.",
            verdict="no",
            check="supported",
            supporting_ids=[contradicted_by],
            reason="the context says 330",
        ),
    )
    outcome = Outcome.PASSED if score >= 0.7 else Outcome.FAILED
    return Evaluation(
        metric="faithfulness",
        outcome=outcome,
        score=score,
        reason="1 of 2 claims supported; not: 'It is 512 metres tall.'",
        threshold=0.7,
        lower_is_better=False,
        judge="openai",
        judge_model="gpt-4o-mini",
        duration_s=0.4,
        cause="contradicted_claim" if outcome is Outcome.FAILED else None,
        verdicts=verdicts,
        passage_relevance=("relevant", "relevant", "irrelevant"),
        tokens=812,
        cost_usd=0.00031,
    )


def relevancy(score: float = 1.0) -> Evaluation:
    return Evaluation(
        metric="answer_relevancy",
        outcome=Outcome.PASSED if score >= 0.5 else Outcome.FAILED,
        score=score,
        reason="2 of 2 statements address the question",
        threshold=0.5,
        lower_is_better=False,
        judge="openai",
        judge_model="gpt-4o-mini",
        cause=None if score >= 0.5 else "off_topic",
        passage_relevance=("relevant", "relevant", "irrelevant"),
        tokens=300,
        cost_usd=0.0001,
    )
