"""Multi-modal grounding: is the response supported by, and in line with, the text AND images retrieved?

Sources: ragas `MultiModalFaithfulness` (`multimodal_faithfulness`) and `MultiModalRelevance`
(`multimodal_relevance`), and LlamaIndex `MultiModalFaithfulnessEvaluator` /
`MultiModalRelevancyEvaluator`. Both libraries ask a vision model ONE binary question per response
(True/False, YES/NO) and score it 1 or 0; so does ragpulse, through the judge's optional
`visual_verdict` (image passages sent as images, `evaluators.images` says which passages are).
Judge calls per case: 1.

A judge that cannot see images (the offline judge) cannot answer for a context holding an image: the
result is unmeasured, saying so. For a text-only context the same binary answer follows from the
answer's claims, which faithfulness and answer relevancy already judge: the response is supported
when every claim is, and in line when every claim addresses the question and is supported. No call
beyond those checks (they coalesce with faithfulness' and answer relevancy's in the session).
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from evaluators import scores
from evaluators.case import CaseField, TestCase
from evaluators.images import image_positions
from evaluators.judges.base import Verdict, VerdictTask
from evaluators.metrics.base import Metric, Scored, listing, record
from evaluators.metrics.faithfulness import NO_CLAIMS
from evaluators.session import JudgeSession

NO_VISION = "the {judge} judge cannot see images: configure a vision-capable LLM judge"


class _MultimodalMetric(Metric):
    """The shared flow: one visual verdict, or the claim arithmetic for a text-only case."""

    reads_images = True
    about_images = True
    task: ClassVar[VerdictTask]
    check: ClassVar[str]
    words: ClassVar[tuple[str, str]]  # how the reason says yes / no

    def question(self, case: TestCase) -> str | None:
        return None

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        passages = list(case.retrieval_context or [])
        images = len(image_positions(passages))
        details = {"image_passages": images, "text_passages": len(passages) - images}
        response = case.actual_output or ""
        if session.sees_images:
            verdict = await session.visual_verdict(
                response, passages, self.task, question=self.question(case)
            )
            return self._binary(verdict.verdict == "yes", verdict, response, details)
        if images:
            raise scores.UndefinedScoreError(NO_VISION.format(judge=session.judge.info.judge))
        return await self.from_claims(case, session, details)

    def _binary(self, ok: bool, verdict: Verdict, response: str, details: dict[str, int]) -> Scored:
        context = f"{details['image_passages']} image(s) and {details['text_passages']} text passage(s)"
        reason = f"the response is {self.words[0] if ok else self.words[1]} the context ({context})"
        if verdict.reason:
            reason += f": {verdict.reason}"
        return Scored(float(ok), reason, [record("response", response, verdict, self.check)], details)

    def claim_asks(self, case: TestCase) -> list[tuple[list[str], VerdictTask]]:
        """The checks every claim must pass in a text-only case: (references, task)."""
        return [(list(case.retrieval_context or []), VerdictTask.SUPPORTED)]

    async def claim_checks(self, case: TestCase, session: JudgeSession) -> list[tuple[str, Verdict]]:
        """Each claim with its verdict over all checks (yes when it passes every one; the reason of a
        failed check otherwise). The checks are asked together, so the session folds them (and
        faithfulness' and answer relevancy's) into one call."""
        claims = await session.answer_claims(case)
        if not claims:
            raise scores.UndefinedScoreError(NO_CLAIMS)
        asks = self.claim_asks(case)
        replies = await asyncio.gather(*(session.verdicts(claims, refs, task) for refs, task in asks))
        judged = []
        for i, claim in enumerate(claims):
            failed = [
                reply[i]
                for (_, task), reply in zip(asks, replies, strict=True)
                if not _passes(task, reply[i])
            ]
            reason = "; ".join(v.reason for v in failed if v.reason)
            judged.append((claim, Verdict("no", reason) if failed else Verdict("yes", replies[0][i].reason)))
        return judged

    async def from_claims(self, case: TestCase, session: JudgeSession, details: dict[str, int]) -> Scored:
        judged = await self.claim_checks(case, session)
        failing = [claim for claim, verdict in judged if verdict.verdict != "yes"]
        ok = not failing
        reason = (
            f"text-only context, judged claim by claim: {len(judged) - len(failing)} of {len(judged)} "
            f"claims pass, so the response is {self.words[0] if ok else self.words[1]} the context"
        )
        if failing:
            reason += f"; not: {listing(failing)}"
        records = [record("claim", claim, verdict, self.check) for claim, verdict in judged]
        return Scored(float(ok), reason, records, details | {"claims": len(judged)})


class MultimodalFaithfulness(_MultimodalMetric):
    """1 when the response is supported by the visual and textual context, else 0 (ragas, LlamaIndex)."""

    name = "multimodal_faithfulness"
    required_fields = (CaseField.ACTUAL_OUTPUT, CaseField.RETRIEVAL_CONTEXT)
    task = VerdictTask.SUPPORTED
    check = "multimodal_supported"
    words = ("supported by", "not supported by")


class MultimodalRelevance(_MultimodalMetric):
    """1 when the response to the question is in line with the visual and textual context, else 0."""

    name = "multimodal_relevance"
    required_fields = (CaseField.INPUT, CaseField.ACTUAL_OUTPUT, CaseField.RETRIEVAL_CONTEXT)
    task = VerdictTask.RELEVANT
    check = "multimodal_relevant"
    words = ("in line with", "not in line with")

    def question(self, case: TestCase) -> str | None:
        return case.input or ""

    def claim_asks(self, case: TestCase) -> list[tuple[list[str], VerdictTask]]:
        """Supported (faithfulness' check) and addressing the question (answer relevancy's)."""
        return [*super().claim_asks(case), ([case.input or ""], VerdictTask.RELEVANT)]


def _passes(task: VerdictTask, verdict: Verdict) -> bool:
    """A claim passes 'supported' on yes only (entailment), 'relevant' unless no (as answer relevancy)."""
    return verdict.verdict != "no" if task is VerdictTask.RELEVANT else verdict.verdict == "yes"
