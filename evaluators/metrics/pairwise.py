"""Pairwise comparison: is this run's answer better than the baseline run's, for the same question?

LangChain's `pairwise_string` evaluator and LlamaIndex's `PairwiseComparisonEvaluator` score 1 when
the first answer is preferred, 0 when the second is, 0.5 for a tie. LLM judges favour whichever answer
they read first, so, as LlamaIndex does by default (`enforce_consensus`), the judge is asked in both
orders, in two calls: a preference that survives the swap counts, one that flips with the order is a
tie (position bias). The score is for `actual_output` against `baseline_output`, so with the default
threshold 0.5 a case passes when this run's answer is not worse.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from evaluators.case import CaseField, TestCase
from evaluators.judges.base import Verdict, VerdictTask
from evaluators.judges.prompts import instruction_overrides
from evaluators.metrics.base import Metric, Scored, record, undecided
from evaluators.session import JudgeSession

# Completes the judge's "For each item answer ...". A tie is "no" in both orders, so "idk" is left to
# a judge that cannot compare at all (the offline judge), whose score is then unmeasured.
PAIRWISE_INSTRUCTION = (
    "yes if answer A in the item is a better reply than answer B to the question in REFERENCES, no if it "
    "is not (B is better, or they are equally good). Better means: answers what was asked, is correct and "
    "supported by the passages in REFERENCES (when there are any), and is clear. Ignore length and order"
)


def paired(first: str, second: str) -> str:
    return f"Answer A:\n{first}\n\nAnswer B:\n{second}"


def consensus(this_first: Verdict, baseline_first: Verdict) -> tuple[float, str]:
    """This run's score from the two orders (LangChain's and LlamaIndex's 1 / 0 / 0.5)."""
    this_wins, baseline_wins = this_first.verdict == "yes", baseline_first.verdict == "yes"
    if this_wins and not baseline_wins:
        return 1.0, "this run's answer is better, in both orders"
    if baseline_wins and not this_wins:
        return 0.0, "the baseline's answer is better, in both orders"
    if this_wins and baseline_wins:
        return 0.5, "the judge preferred whichever answer came first (position bias): a tie"
    return 0.5, "neither answer is better, in both orders: a tie"


class PairwisePreference(Metric):
    """1 when this run's answer is preferred in both orders, 0 when the baseline's is, else 0.5."""

    name = "pairwise_preference"
    required_fields = (CaseField.INPUT, CaseField.ACTUAL_OUTPUT, CaseField.BASELINE_OUTPUT)
    judged_offline = False

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        this, baseline = case.actual_output or "", case.baseline_output or ""
        references: Sequence[str] = [f"Question: {case.input}", *(case.retrieval_context or [])]
        overrides = {} if "satisfies" in (self.template or {}) else {"satisfies": PAIRWISE_INSTRUCTION}
        with instruction_overrides(overrides):
            this_first, baseline_first = await asyncio.gather(
                session.verdicts([paired(this, baseline)], references, VerdictTask.SATISFIES),
                session.verdicts([paired(baseline, this)], references, VerdictTask.SATISFIES),
            )
        verdicts = (this_first[0], baseline_first[0])
        if all(v.verdict == "idk" for v in verdicts):
            raise undecided(session, verdicts, "the judge could not compare the answers")
        score, reason = consensus(*verdicts)
        return Scored(
            score,
            reason,
            [
                record("pair", "this run's answer as A", verdicts[0], "a_better"),
                record("pair", "the baseline's answer as A", verdicts[1], "a_better"),
            ],
        )
