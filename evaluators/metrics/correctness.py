"""Answer against the reference answer: noise sensitivity, semantic similarity, answer correctness.

Judge calls per case: noise sensitivity adds 1 verdict check to the shared claims (coalesced), and its
relevant / irrelevant variants the expected output's claim extraction and 1 check of those claims;
similarity is 1 embedding call; correctness is 1 statement extraction of the expected output + 2
verdict checks (one coalesced with the claim checks) + 1 embedding call.
"""

from __future__ import annotations

import asyncio
from typing import Literal, Unpack

from evaluators import scores
from evaluators.case import CaseField, TestCase
from evaluators.claim_table import Check, claim_table
from evaluators.judges.base import ExtractKind, VerdictTask
from evaluators.metrics.base import Metric, MetricOptions, Scored, listing, record
from evaluators.result import VerdictRecord
from evaluators.session import JudgeSession

NoiseMode = Literal["all", "relevant", "irrelevant"]
_NOISE_SOURCE = {
    "all": "",
    "relevant": " and entailed by a relevant chunk",
    "irrelevant": " and entailed by irrelevant chunks only",
}


class NoiseSensitivity(Metric):
    """Incorrect claims (not entailed by the expected output) / claims; lower is better.

    `mode="relevant"` / `"irrelevant"` count only the incorrect claims entailed by a relevant chunk /
    by irrelevant chunks alone, a chunk being relevant when it entails an expected-output claim: RAGChecker's
    noise sensitivity in relevant / irrelevant chunks (and ragas'). The denominator stays all claims.
    The checks are the claim table's (`evaluators.claim_table`), shared with faithfulness and the
    RAGChecker diagnostics. The name gains the mode suffix so the variants can run side by side.
    """

    lower_is_better = True
    required_fields = (
        CaseField.INPUT,
        CaseField.ACTUAL_OUTPUT,
        CaseField.RETRIEVAL_CONTEXT,
        CaseField.EXPECTED_OUTPUT,
    )

    def __init__(
        self,
        *,
        mode: NoiseMode = "all",
        **options: Unpack[MetricOptions],
    ) -> None:
        super().__init__(**options)
        if mode not in ("all", "relevant", "irrelevant"):
            raise ValueError("mode must be 'all', 'relevant' or 'irrelevant'")
        self.mode = mode
        self.name = "noise_sensitivity" if mode == "all" else f"noise_sensitivity_{mode}"

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        checks = Check.RESPONSE_IN_REFERENCE
        if self.mode != "all":
            checks |= Check.RESPONSE_IN_CONTEXT | Check.REFERENCE_IN_CONTEXT
        table = await claim_table(case, session, checks)
        claims = table.response_claims
        if not claims:
            raise scores.UndefinedScoreError("the answer has no claims")
        incorrect = [not ok for ok in table.entailed(Check.RESPONSE_IN_REFERENCE)]
        if self.mode == "all":
            flags = incorrect
        else:
            relevant = {chunk for chunk, entailed in enumerate(table.entailing_chunks()) if entailed}
            flags = []
            for wrong, verdict in zip(incorrect, table.verdicts[Check.RESPONSE_IN_CONTEXT], strict=True):
                chunks = set(verdict.supporting_ids) if verdict.verdict == "yes" else set()
                in_relevant, in_irrelevant = bool(chunks & relevant), bool(chunks - relevant)
                noisy = in_relevant if self.mode == "relevant" else in_irrelevant and not in_relevant
                flags.append(wrong and noisy)
        counted = [claim for claim, flag in zip(claims, flags, strict=True) if flag]
        reason = f"{len(counted)} of {len(claims)} claims are not supported by the expected output"
        reason += _NOISE_SOURCE[self.mode]
        if counted:
            reason += f": {listing(counted)}"
        return Scored(
            scores.verdict_ratio(flags),
            reason,
            [
                record("claim", c, v, "supported_by_expected")
                for c, v in zip(claims, table.verdicts[Check.RESPONSE_IN_REFERENCE], strict=True)
            ],
        )


class AnswerSimilarity(Metric):
    """Cosine similarity of the embeddings of the answer and the expected output."""

    name = "answer_similarity"
    required_fields = (CaseField.ACTUAL_OUTPUT, CaseField.EXPECTED_OUTPUT)
    needs_embeddings = True

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        answer, expected = await session.embed([case.actual_output or "", case.expected_output or ""])
        similarity = scores.cosine_similarity(answer, expected)
        return Scored(similarity, f"cosine similarity {similarity:.3f} to the expected output")


class AnswerCorrectness(Metric):
    """weights[0] * factual F1 (TP/FP/FN statements) + weights[1] * semantic similarity (ragas)."""

    name = "answer_correctness"
    required_fields = (CaseField.ACTUAL_OUTPUT, CaseField.EXPECTED_OUTPUT)
    needs_embeddings = True

    def __init__(
        self,
        *,
        weights: tuple[float, float] = (0.75, 0.25),
        round_at: float | None = None,
        **options: Unpack[MetricOptions],
    ) -> None:
        """`round_at`: ragas' optional threshold: the score becomes 1 at or above it, else 0."""
        super().__init__(**options)
        if min(weights) < 0 or sum(weights) == 0:
            raise ValueError("weights must be non-negative and not both zero")
        self.weights = weights
        self.round_at = round_at
        self.needs_embeddings = weights[1] > 0

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        answer, expected = case.actual_output or "", case.expected_output or ""
        claims, statements = await asyncio.gather(
            session.answer_claims(case), session.extract(expected, ExtractKind.STATEMENTS)
        )
        in_expected, in_answer = await asyncio.gather(
            session.verdicts(claims, [expected], VerdictTask.SUPPORTED),
            session.verdicts(statements, [answer], VerdictTask.SUPPORTED),
        )
        tp = sum(v.verdict == "yes" for v in in_expected)
        fp = len(claims) - tp
        fn = sum(v.verdict != "yes" for v in in_answer)
        similarity = 0.0
        if self.weights[1] > 0:
            vectors = await session.embed([answer, expected])
            similarity = scores.cosine_similarity(vectors[0], vectors[1])
        score = scores.answer_correctness(tp, fp, fn, similarity, self.weights)
        if self.round_at is not None:
            score = float(score >= self.round_at)
        records = [
            VerdictRecord(kind="claim", item=c, verdict="tp" if v.verdict == "yes" else "fp", reason=v.reason)
            for c, v in zip(claims, in_expected, strict=True)
        ]
        records += [
            VerdictRecord(kind="statement", item=s, verdict="fn", reason=v.reason)
            for s, v in zip(statements, in_answer, strict=True)
            if v.verdict != "yes"
        ]
        f1 = scores.factual_f1(tp, fp, fn)
        reason = f"TP={tp} FP={fp} FN={fn}, factual F1 {f1:.3f}, similarity {similarity:.3f}"
        missing = [r.item for r in records if r.verdict == "fn"]
        if missing:
            reason += f"; missing: {listing(missing)}"
        return Scored(
            score, reason, records, {"tp": tp, "fp": fp, "fn": fn, "f1": f1, "similarity": similarity}
        )
