"""A case's claim-entailment table: RAGChecker's input, from which all its diagnostics are counted.

RAGChecker (Ru et al., 2024) extracts claims from the response and from the ground-truth answer and
checks each one for entailment against the other text and against the retrieved chunks. Those four
checks are the only judge work its metrics need, so each metric asks `claim_table` for the checks it
counts and nothing else. The session runs each distinct request once per case and merges checks on the
same claims into one call: any set of these metrics costs at most two extractions (the response's,
shared with faithfulness and the other claim metrics, and the reference's) and two verdict calls.
Response claims vs the chunks is the very request faithfulness makes; response claims vs the expected
output is noise sensitivity's and answer correctness'.

RAGChecker checks each chunk separately; here the chunks are judged together in one request and the
judge names the entailing chunks in `supporting_ids` (see `entailing_chunks`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import Flag, auto

from evaluators.case import TestCase
from evaluators.judges.base import Verdict, VerdictTask
from evaluators.session import JudgeSession


class Check(Flag):
    """One entailment check of one side's claims against one text."""

    RESPONSE_IN_REFERENCE = auto()  # response claims vs the expected output: is each claim correct?
    RESPONSE_IN_CONTEXT = auto()  # response claims vs the chunks: faithful? (faithfulness' request)
    REFERENCE_IN_RESPONSE = auto()  # reference claims vs the response: does the response say it?
    REFERENCE_IN_CONTEXT = auto()  # reference claims vs the chunks: was it retrieved, and by which?


RESPONSE_CHECKS = Check.RESPONSE_IN_REFERENCE | Check.RESPONSE_IN_CONTEXT
REFERENCE_CHECKS = Check.REFERENCE_IN_RESPONSE | Check.REFERENCE_IN_CONTEXT

# The check name each verdict keeps in results: against passages it is "supported" (so the page and
# the failure causes read its supporting ids as passages), against a text a name of its own.
CHECK_NAMES: dict[Check, str] = {
    Check.RESPONSE_IN_REFERENCE: "supported_by_expected",
    Check.RESPONSE_IN_CONTEXT: "supported",
    Check.REFERENCE_IN_RESPONSE: "supported_by_answer",
    Check.REFERENCE_IN_CONTEXT: "supported",
}


@dataclass(frozen=True, slots=True)
class ClaimTable:
    """The claims of both sides and the verdicts of the checks asked for (absent checks: no entry)."""

    response_claims: list[str]
    reference_claims: list[str]
    verdicts: dict[Check, list[Verdict]]
    chunks: int

    def entailed(self, check: Check) -> list[bool]:
        """Per claim of the check's side: entailed ("idk" and "no" are not)."""
        return [v.verdict == "yes" for v in self.verdicts[check]]

    def entailing_chunks(self) -> list[set[int]]:
        """Per chunk, the reference claims it entails: the chunks the judge named as supporting an
        entailed reference claim. A "yes" without ids credits no chunk (an LLM may list fewer chunks
        than entail a claim; RAGChecker asks per chunk and would credit each)."""
        found: list[set[int]] = [set() for _ in range(self.chunks)]
        for claim, verdict in enumerate(self.verdicts[Check.REFERENCE_IN_CONTEXT]):
            if verdict.verdict == "yes":
                for chunk in verdict.supporting_ids:
                    if 0 <= chunk < self.chunks:
                        found[chunk].add(claim)
        return found


async def claim_table(case: TestCase, session: JudgeSession, checks: Check) -> ClaimTable:
    """The table with `checks` judged. Each side's checks are asked as soon as its claims are known,
    all at once, so that the session merges them with every other metric's checks on those claims."""
    chunks = list(case.retrieval_context or [])
    against: dict[Check, list[str]] = {
        Check.RESPONSE_IN_REFERENCE: [case.expected_output or ""],
        Check.RESPONSE_IN_CONTEXT: chunks,
        Check.REFERENCE_IN_RESPONSE: [case.actual_output or ""],
        Check.REFERENCE_IN_CONTEXT: chunks,
    }
    (response, response_verdicts), (reference, reference_verdicts) = await asyncio.gather(
        _judge_side(session, lambda: session.answer_claims(case), checks & RESPONSE_CHECKS, against),
        _judge_side(session, lambda: session.reference_claims(case), checks & REFERENCE_CHECKS, against),
    )
    return ClaimTable(response, reference, response_verdicts | reference_verdicts, len(chunks))


async def _judge_side(
    session: JudgeSession,
    claims_of: Callable[[], Awaitable[list[str]]],
    checks: Check,
    against: dict[Check, list[str]],
) -> tuple[list[str], dict[Check, list[Verdict]]]:
    if not checks:
        return [], {}
    claims = await claims_of()
    asked = [check for check in against if check in checks]
    verdicts: Sequence[list[Verdict]] = await asyncio.gather(
        *(session.verdicts(claims, against[check], VerdictTask.SUPPORTED) for check in asked)
    )
    return claims, dict(zip(asked, verdicts, strict=True))
