"""RAGChecker's claim-level diagnostics: overall precision / recall / F1, retriever claim recall and
context precision, and the generator's context utilization, hallucination and self-knowledge.

Source: Ru et al., 2024, "RAGChecker: A Fine-grained Framework for Diagnosing Retrieval-Augmented
Generation" (github.com/amazon-science/RAGChecker). Every metric counts from one claim-entailment table
(`evaluators.claim_table`), asking only for the checks it needs, so the whole family costs at most two
extractions and two verdict calls per case, shared with faithfulness and noise sensitivity. RAGChecker's
faithfulness is ragpulse's `faithfulness` (the same request and count) and its noise sensitivity is
`noise_sensitivity` with `mode="relevant"` / `"irrelevant"`: neither is repeated here.

Names are ragpulse's own where RAGChecker's would shadow a metric with other arithmetic (`hallucination`
and `context_utilization` are deepeval's and ragas'); `ragchecker_*` aliases are in the registry.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar, Unpack

from evaluators import scores
from evaluators.case import CaseField, TestCase
from evaluators.claim_table import (
    CHECK_NAMES,
    REFERENCE_CHECKS,
    RESPONSE_CHECKS,
    Check,
    ClaimTable,
    claim_table,
)
from evaluators.metrics.base import Metric, MetricOptions, Scored, listing, names_of, record, share
from evaluators.metrics.faithfulness import NO_CLAIMS
from evaluators.result import VerdictRecord
from evaluators.session import JudgeSession

NO_REFERENCE_CLAIMS = "the expected output states no claim the judge could check"
_ANSWER_REFERENCE = (CaseField.ACTUAL_OUTPUT, CaseField.EXPECTED_OUTPUT)
_CONTEXT_REFERENCE = (CaseField.RETRIEVAL_CONTEXT, CaseField.EXPECTED_OUTPUT)
_ALL_THREE = (CaseField.ACTUAL_OUTPUT, CaseField.RETRIEVAL_CONTEXT, CaseField.EXPECTED_OUTPUT)


class _ClaimMetric(Metric):
    """A metric counted (`count`) from the claim table; `checks` are the entailment checks it reads."""

    checks: ClassVar[Check]

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        table = await claim_table(case, session, self.checks)
        if self.checks & RESPONSE_CHECKS and not table.response_claims:
            raise scores.UndefinedScoreError(NO_CLAIMS)
        if self.checks & REFERENCE_CHECKS and not table.reference_claims:
            raise scores.UndefinedScoreError(NO_REFERENCE_CLAIMS)
        return self.count(case, table)

    @abstractmethod
    def count(self, case: TestCase, table: ClaimTable) -> Scored:
        """The score, reason and verdicts from the table (which holds the claims the checks need)."""


def _records(kind: str, claims: list[str], table: ClaimTable, *checks: Check) -> list[VerdictRecord]:
    return [
        record(kind, claim, table.verdicts[check][i], CHECK_NAMES[check])
        for i, claim in enumerate(claims)
        for check in checks
    ]


def _unless(flags: list[bool], items: list[str]) -> list[str]:
    return [item for item, flag in zip(items, flags, strict=True) if not flag]


def _where(flags: list[bool], items: list[str]) -> list[str]:
    return [item for item, flag in zip(items, flags, strict=True) if flag]


class _EntailedShare(_ClaimMetric):
    """The share of one side's claims that pass the one check `checks`, listing (some of) those that
    do not under `unmet`: answer claims for a response check, expected-output claims otherwise."""

    counted: ClassVar[str]
    unmet: ClassVar[str]

    def count(self, case: TestCase, table: ClaimTable) -> Scored:
        entailed = table.entailed(self.checks)
        if self.checks & RESPONSE_CHECKS:
            kind, claims = "claim", table.response_claims
        else:
            kind, claims = "reference_claim", table.reference_claims
        return share(
            entailed,
            self.counted,
            (self.unmet, _unless(entailed, claims)),
            _records(kind, claims, table, self.checks),
        )


class ClaimPrecision(_EntailedShare):
    """Answer claims entailed by the expected output / answer claims (RAGChecker's precision)."""

    name = "claim_precision"
    required_fields = _ANSWER_REFERENCE
    checks = Check.RESPONSE_IN_REFERENCE
    counted = "answer claims are entailed by the expected output"
    unmet = "not"


class ClaimRecall(_EntailedShare):
    """Expected-output claims entailed by the answer / expected-output claims (RAGChecker's recall)."""

    name = "claim_recall"
    required_fields = _ANSWER_REFERENCE
    checks = Check.REFERENCE_IN_RESPONSE
    counted = "expected-output claims are entailed by the answer"
    unmet = "missing"


class ClaimF1(_ClaimMetric):
    """Harmonic mean of claim precision and claim recall (RAGChecker's F1); 0 when either is 0."""

    name = "claim_f1"
    required_fields = _ANSWER_REFERENCE
    checks = Check.RESPONSE_IN_REFERENCE | Check.REFERENCE_IN_RESPONSE

    def count(self, case: TestCase, table: ClaimTable) -> Scored:
        correct = table.entailed(Check.RESPONSE_IN_REFERENCE)
        said = table.entailed(Check.REFERENCE_IN_RESPONSE)
        precision, recall = scores.verdict_ratio(correct), scores.verdict_ratio(said)
        reason = (
            f"precision {precision:.3f} ({sum(correct)} of {len(correct)} answer claims correct), "
            f"recall {recall:.3f} ({sum(said)} of {len(said)} expected-output claims in the answer)"
        )
        records = _records("claim", table.response_claims, table, Check.RESPONSE_IN_REFERENCE)
        records += _records("reference_claim", table.reference_claims, table, Check.REFERENCE_IN_RESPONSE)
        details = {"precision": precision, "recall": recall}
        return Scored(scores.harmonic_mean([precision, recall]), reason, records, details)


class RetrieverClaimRecall(_EntailedShare):
    """Expected-output claims entailed by the retrieved chunks / expected-output claims (RAGChecker's
    retriever claim recall): did the retriever bring what the answer needs?"""

    name = "retriever_claim_recall"
    required_fields = _CONTEXT_REFERENCE
    checks = Check.REFERENCE_IN_CONTEXT
    counted = "expected-output claims are entailed by the retrieved chunks"
    unmet = "missing"


class RetrieverContextPrecision(_ClaimMetric):
    """Retrieved chunks that entail at least one expected-output claim / retrieved chunks (RAGChecker's
    retriever context precision). A chunk entails a claim when the judge names it among the claim's
    supporting ids (all chunks are judged in one request)."""

    name = "retriever_context_precision"
    required_fields = _CONTEXT_REFERENCE
    checks = Check.REFERENCE_IN_CONTEXT

    def count(self, case: TestCase, table: ClaimTable) -> Scored:
        chunks = list(case.retrieval_context or [])
        entailing = table.entailing_chunks()
        claims = table.reference_claims
        records = [
            VerdictRecord(
                kind="node",
                item=chunk,
                verdict="yes" if found else "no",
                reason=f"entails: {listing([claims[i] for i in sorted(found)])}"
                if found
                else "entails no expected-output claim",
                check="entails_reference_claim",
            )
            for chunk, found in zip(chunks, entailing, strict=True)
        ]
        useful = [bool(found) for found in entailing]
        reason = f"{sum(useful)} of {len(useful)} retrieved chunks entail an expected-output claim"
        if not all(useful):
            reason += f"; none: chunks {', '.join(str(i + 1) for i, ok in enumerate(useful) if not ok)}"
        unattributed = sum(v.verdict == "yes" and not v.supporting_ids for v in table.verdicts[self.checks])
        return Scored(scores.verdict_ratio(useful), reason, records, {"unattributed_claims": unattributed})


class ClaimContextUtilization(_ClaimMetric):
    """Expected-output claims entailed by both the chunks and the answer / expected-output claims entailed
    by the chunks (RAGChecker's context utilization): of what was retrieved and needed, how much the
    generator used. Unmeasured when the chunks entail no expected-output claim (nothing to use)."""

    name = "claim_context_utilization"
    required_fields = _ALL_THREE
    checks = Check.REFERENCE_IN_CONTEXT | Check.REFERENCE_IN_RESPONSE

    def count(self, case: TestCase, table: ClaimTable) -> Scored:
        retrieved = table.entailed(Check.REFERENCE_IN_CONTEXT)
        said = table.entailed(Check.REFERENCE_IN_RESPONSE)
        available = [i for i, ok in enumerate(retrieved) if ok]
        if not available:
            raise scores.UndefinedScoreError(
                "the retrieved chunks entail no expected-output claim, so there was nothing to use "
                "(see retriever_claim_recall)"
            )
        claims = [table.reference_claims[i] for i in available]
        used = [said[i] for i in available]
        records = [
            record("reference_claim", table.reference_claims[i], table.verdicts[check][i], CHECK_NAMES[check])
            for i in available
            for check in (Check.REFERENCE_IN_CONTEXT, Check.REFERENCE_IN_RESPONSE)
        ]
        return share(
            used,
            "expected-output claims found in the retrieved chunks are entailed by the answer",
            ("unused", _unless(used, claims)),
            records,
        )


class _UngroundedClaims(_ClaimMetric):
    """Answer claims that no chunk entails, split by whether the expected output entails them."""

    required_fields = _ALL_THREE
    checks = Check.RESPONSE_IN_REFERENCE | Check.RESPONSE_IN_CONTEXT
    lower_is_better = True
    counts_correct: ClassVar[bool]
    counted: ClassVar[str]

    def count(self, case: TestCase, table: ClaimTable) -> Scored:
        correct = table.entailed(Check.RESPONSE_IN_REFERENCE)
        faithful = table.entailed(Check.RESPONSE_IN_CONTEXT)
        flags = [c == self.counts_correct and not f for c, f in zip(correct, faithful, strict=True)]
        claims = table.response_claims
        records = _records("claim", claims, table, Check.RESPONSE_IN_CONTEXT, Check.RESPONSE_IN_REFERENCE)
        return share(flags, self.counted, ("namely", _where(flags, claims)), records)


class ClaimHallucination(_UngroundedClaims):
    """Answer claims entailed neither by the expected output nor by any chunk / answer claims
    (RAGChecker's hallucination); lower is better. deepeval's `hallucination` is another metric."""

    name = "claim_hallucination"
    counts_correct = False
    counted = "answer claims are entailed neither by the expected output nor by any retrieved chunk"

    def __init__(self, **options: Unpack[MetricOptions]) -> None:
        super().__init__(**({"threshold": 0.0} | options))  # one hallucinated claim fails, as `hallucination`


class SelfKnowledge(_UngroundedClaims):
    """Answer claims entailed by the expected output but by no chunk / answer claims (RAGChecker's
    self-knowledge): correct facts the generator did not take from the context; lower is better for a
    service that should answer from its documents."""

    name = "self_knowledge"
    counts_correct = True
    counted = "answer claims are correct but entailed by no retrieved chunk"


DIAGNOSTIC_METRICS = names_of(
    ClaimPrecision,
    ClaimRecall,
    ClaimF1,
    RetrieverClaimRecall,
    RetrieverContextPrecision,
    ClaimContextUtilization,
    ClaimHallucination,
    SelfKnowledge,
)  # the names, in this order, for tables, benchmarks and tests (as `ranking.RANKING_METRICS`)
