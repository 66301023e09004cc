"""Grounding of the answer: Faithfulness (claims vs retrieved context), Hallucination (vs reference contexts).

Both start from the answer's claims, extracted once per case by the session and shared with answer
relevancy and noise sensitivity. Judge calls per case: 1 claim extraction (shared) + 1 verdict call
(coalesced with the other claim checks), plus 1 truth extraction when `truths_extraction_limit` is set.
"""

from __future__ import annotations

from typing import Any, Literal, Unpack

from evaluators import scores
from evaluators.case import CaseField, MissingFieldError, TestCase
from evaluators.judges.base import ExtractKind, VerdictTask
from evaluators.metrics.base import (
    Metric,
    MetricOptions,
    ReasonedMetric,
    ReasonedOptions,
    Scored,
    record,
    share,
)
from evaluators.metrics.unjudged import judged
from evaluators.session import JudgeSession

FaithfulnessMode = Literal["entailment", "contradiction"]
NO_CLAIMS = "no checkable claim: the answer has text but states no fact the judge could check"


class Faithfulness(ReasonedMetric):
    """Supported claims / claims.

    `mode="entailment"` (default; ragas, rag_evals) counts a claim only when the context implies it,
    which catches hallucinated additions; `mode="contradiction"` (deepeval) counts every claim the
    context does not contradict. An answer without checkable claims ('Hello!', or text the judge
    cannot read) is unmeasured, never a silent pass; `zero_claims_score` gives it a score instead
    (1.0 as deepeval, 0.0 as rag_evals). `reasoning="cot"`: TruLens' groundedness with CoT reasons.
    """

    name = "faithfulness"
    required_fields = (CaseField.ACTUAL_OUTPUT, CaseField.RETRIEVAL_CONTEXT)

    def __init__(
        self,
        *,
        mode: FaithfulnessMode = "entailment",
        truths_extraction_limit: int | None = None,
        zero_claims_score: float | None = None,
        **options: Unpack[ReasonedOptions],
    ) -> None:
        super().__init__(**options)
        if mode not in ("entailment", "contradiction"):
            raise ValueError("mode must be 'entailment' or 'contradiction'")
        if truths_extraction_limit is not None and truths_extraction_limit < 1:
            raise ValueError("truths_extraction_limit must be a positive integer")
        self.mode = mode
        self.truths_extraction_limit = truths_extraction_limit
        self.zero_claims_score = zero_claims_score

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        claims = await session.answer_claims(case)
        if not claims:
            if self.zero_claims_score is None:
                raise scores.UndefinedScoreError(NO_CLAIMS)
            return Scored(self.zero_claims_score, NO_CLAIMS, details={"claims": 0, "mode": self.mode})
        references = list(case.retrieval_context or [])
        details: dict[str, Any] = {"mode": self.mode}
        if self.truths_extraction_limit:
            references = await session.extract(
                "\n\n".join(references), ExtractKind.TRUTHS, limit=self.truths_extraction_limit
            )
            details["truths"] = references
            if not references:
                raise scores.UndefinedScoreError("the retrieval context states no truths")
        task = VerdictTask.SUPPORTED if self.mode == "entailment" else VerdictTask.CONTRADICTED
        verdicts = await session.verdicts(claims, references, task, partial=True)
        pairs = judged(claims, verdicts)
        if self.mode == "entailment":
            faithful = [v.verdict == "yes" for _, v in pairs]
        else:
            faithful = [v.verdict != "yes" for _, v in pairs]
        failing = [claim for (claim, _), ok in zip(pairs, faithful, strict=True) if not ok]
        word = "supported" if self.mode == "entailment" else "not contradicted"
        return share(
            faithful,
            f"claims {word} by the context",
            ("not", failing),
            [record("claim", c, v, task.value) for c, v in zip(claims, verdicts, strict=True)],
            details | {"claims": len(claims)},
        )


class Hallucination(Metric):
    """Contradicted reference contexts / reference contexts; lower is better.

    Without reference contexts (`context`) the retrieved ones (`retrieval_context`, ragas' `contexts` /
    `retrieved_contexts`) stand in, as the sidecar does for live traffic, and the reason says so.

    The threshold defaults to 0: one contradicted context fails. deepeval's 0.5 lets an answer
    that contradicts one of three retrieved passages pass; `threshold=0.5` restores it.
    """

    name = "hallucination"
    lower_is_better = True
    # And `context` or `retrieval_context`, which a tuple of fields cannot say: checked in score_case.
    required_fields = (CaseField.ACTUAL_OUTPUT,)

    def __init__(self, **options: Unpack[MetricOptions]) -> None:
        super().__init__(**({"threshold": 0.0} | options))

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        contexts = [c for c in case.context or [] if c.strip()]
        note = ""
        if not contexts:
            contexts = [c for c in case.retrieval_context or [] if c.strip()]
            note = " (no reference contexts: judged against the retrieval context)"
            if not contexts:
                raise MissingFieldError(self.name, CaseField.CONTEXT)
        claims = await session.answer_claims(case)
        if not claims:
            raise scores.UndefinedScoreError(NO_CLAIMS)
        verdicts = await session.verdicts(contexts, claims, VerdictTask.CONTRADICTED, partial=True)
        contradicted = [v.verdict == "yes" for _, v in judged(contexts, verdicts)]
        score = scores.verdict_ratio(contradicted)
        reason = f"the answer contradicts {sum(contradicted)} of {len(contradicted)} reference contexts{note}"
        return Scored(
            score,
            reason,
            [
                record("context", c, v, "contradicted_by_answer")
                for c, v in zip(contexts, verdicts, strict=True)
            ],
            {"claims": claims, "contexts": "context" if not note else "retrieval_context"},
        )
