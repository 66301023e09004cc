"""Does the answer address the question? Judge-based (deepeval) and similarity-based (ragas) variants.

AnswerRelevancy reuses the answer's shared claims and adds one verdict check, coalesced with
faithfulness' check into the same call. AnswerRelevancySimilarity costs 1 question-generation call
and 1 embedding call.
"""

from __future__ import annotations

from typing import Unpack

from evaluators import scores
from evaluators.case import CaseField, TestCase
from evaluators.judges.base import ExtractKind, VerdictTask
from evaluators.metrics.base import Metric, MetricOptions, ReasonedMetric, Scored, record, share
from evaluators.metrics.unjudged import judged
from evaluators.result import VerdictRecord
from evaluators.session import JudgeSession


class AnswerRelevancy(ReasonedMetric):
    """Relevant statements / statements, where "idk" (partly relevant) counts as relevant, as in deepeval.
    `reasoning="cot"`: TruLens' answer relevance with CoT reasons."""

    name = "answer_relevancy"
    required_fields = (CaseField.INPUT, CaseField.ACTUAL_OUTPUT)

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        statements = await session.answer_claims(case) or await self._factless_statements(case, session)
        if not statements:
            raise scores.UndefinedScoreError("the answer has no statements to judge")
        verdicts = await session.verdicts(statements, [case.input or ""], VerdictTask.RELEVANT, partial=True)
        pairs = judged(statements, verdicts)
        relevant = [v.verdict != "no" for _, v in pairs]
        irrelevant = [s for (s, _), ok in zip(pairs, relevant, strict=True) if not ok]
        return share(
            relevant,
            "statements address the question",
            ("off-topic", irrelevant),
            [record("statement", s, v, "relevant") for s, v in zip(statements, verdicts, strict=True)],
        )

    @staticmethod
    async def _factless_statements(case: TestCase, session: JudgeSession) -> list[str]:
        """An answer that states no fact still answers, or not: 'Yes.' a yes/no question, 'I cannot
        say' nothing. deepeval judges an answer's statements, not its claims: those are its
        statements (one more extraction, only then), else the answer as a whole."""
        answer = (case.actual_output or "").strip()
        return (await session.extract(answer, ExtractKind.STATEMENTS) or [answer]) if answer else []


class AnswerRelevancySimilarity(Metric):
    """Mean cosine between the question and `n_questions` questions the answer would answer (ragas).

    Cosines are reported as computed (they can be negative); a noncommittal answer scores 0.
    """

    name = "answer_relevancy_similarity"
    required_fields = (CaseField.INPUT, CaseField.ACTUAL_OUTPUT)
    needs_embeddings = True

    def __init__(
        self,
        *,
        n_questions: int = 3,
        **options: Unpack[MetricOptions],
    ) -> None:
        super().__init__(**options)
        if n_questions < 1:
            raise ValueError("n_questions must be at least 1")
        self.n_questions = n_questions

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        generated = await session.questions(case.actual_output or "", self.n_questions)
        if not generated.questions:
            raise scores.UndefinedScoreError("the judge generated no questions from the answer")
        vectors = await session.embed([case.input or "", *generated.questions])
        cosines = [scores.cosine_similarity(vectors[0], v) for v in vectors[1:]]
        similarity = scores.mean(cosines)
        records = [
            VerdictRecord(kind="question", item=q, verdict=f"{c:.4f}", check="cosine")
            for q, c in zip(generated.questions, cosines, strict=True)
        ]
        details = {"cosines": cosines, "noncommittal": generated.noncommittal}
        if generated.noncommittal:
            return Scored(0.0, "the answer is noncommittal", records, details)
        return Scored(
            similarity,
            f"mean cosine {similarity:.3f} between the question and "
            f"{len(cosines)} questions the answer answers",
            records,
            details,
        )
