"""Retriever metrics: precision, utilization, recall, relevancy and entity recall of the retrieved nodes.

Judge calls per case: precision and utilization 1 (all nodes in one call, where ragas makes one per
node); recall 1 (split and judge in one call); relevancy 1 (all nodes split and judged in one
call, where deepeval makes one per node); entity recall 2 (entities of expected output and context).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from evaluators import scores
from evaluators.case import CaseField, TestCase
from evaluators.judges.base import ExtractKind, VerdictTask
from evaluators.metrics.base import Metric, ReasonedMetric, Scored, listing, record, share
from evaluators.metrics.unjudged import judged
from evaluators.result import VerdictRecord
from evaluators.session import JudgeSession


class ContextualPrecision(Metric):
    """Rank-aware: mean precision@k over the ranks of nodes useful for the expected output."""

    name = "contextual_precision"
    required_fields = (CaseField.INPUT, CaseField.RETRIEVAL_CONTEXT, CaseField.EXPECTED_OUTPUT)

    def reference(self, case: TestCase) -> str:
        return case.expected_output or ""

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        nodes = list(case.retrieval_context or [])
        verdicts = await session.verdicts(nodes, [self.reference(case)], VerdictTask.USEFUL, partial=True)
        # Ranked among the nodes judged; the reason names their ranks in the full list.
        ranked = judged(range(1, len(nodes) + 1), verdicts)
        relevance = [v.verdict == "yes" for _, v in ranked]
        ranks = [k for k, v in ranked if v.verdict == "yes"]
        reason = (
            f"useful nodes at ranks {ranks} of {len(nodes)}"
            if ranks
            else f"none of the {len(relevance)} nodes is useful"
        )
        return Scored(
            scores.contextual_precision(relevance),
            reason,
            [record("node", n, v, "useful") for n, v in zip(nodes, verdicts, strict=True)],
        )


class ContextUtilization(ContextualPrecision):
    """Contextual precision judged against the actual output instead of the expected one (reference-free)."""

    name = "context_utilization"
    required_fields = (CaseField.INPUT, CaseField.ACTUAL_OUTPUT, CaseField.RETRIEVAL_CONTEXT)

    def reference(self, case: TestCase) -> str:
        return case.actual_output or ""


class ContextualRecall(Metric):
    """Statements of the expected output attributable to the retrieval context / statements."""

    name = "contextual_recall"
    required_fields = (CaseField.RETRIEVAL_CONTEXT, CaseField.EXPECTED_OUTPUT)

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        judged = await session.extract_verdicts(
            case.expected_output or "",
            ExtractKind.STATEMENTS,
            list(case.retrieval_context or []),
            VerdictTask.SUPPORTED,
        )
        if not judged:
            raise scores.UndefinedScoreError("the expected output has no statements")
        attributable = [v.verdict == "yes" for _, v in judged]
        missing = [s for (s, _), ok in zip(judged, attributable, strict=True) if not ok]
        return share(
            attributable,
            "expected statements found in the context",
            ("missing", missing),
            [record("statement", s, v, "supported") for s, v in judged],
        )


class ContextualRelevancy(ReasonedMetric):
    """Statements of all nodes relevant to the input / all statements of all nodes.
    `reasoning="cot"`: TruLens' context relevance with CoT reasons."""

    name = "contextual_relevancy"
    required_fields = (CaseField.INPUT, CaseField.RETRIEVAL_CONTEXT)

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        passages = list(case.retrieval_context or [])
        judged = await session.extract_verdicts(
            "\n\n".join(passages), ExtractKind.STATEMENTS, [case.input or ""], VerdictTask.RELEVANT
        )
        if not judged:
            raise scores.UndefinedScoreError("the retrieval context has no statements")
        relevant = [v.verdict == "yes" for _, v in judged]
        reason = f"{sum(relevant)} of {len(judged)} context statements are relevant to the input"
        sources = source_passages([s for s, _ in judged], passages)
        records = [
            record("statement", s, v, "relevant", source_ids=source)
            for (s, v), source in zip(judged, sources, strict=True)
        ]
        return Scored(scores.verdict_ratio(relevant), reason, records)


_WORD = re.compile(r"\w+")


def source_passages(statements: Sequence[str], passages: Sequence[str]) -> list[list[int]]:
    """The passage each statement was split from: the first one holding all its words, else the first
    sharing most of them (statements are extracted from all passages at once, in one judge call, so
    the judge does not say which). The containment test builds no set: most statements pass it."""
    pools = [set(_WORD.findall(p.lower())) for p in passages]
    sources: list[list[int]] = []
    for statement in statements:
        words = set(_WORD.findall(statement.lower()))
        source = next((k for k, pool in enumerate(pools) if words <= pool), None) if words else None
        if source is None:
            overlaps = [len(words & pool) for pool in pools]
            best = max(overlaps, default=0)
            source = overlaps.index(best) if best else None
        sources.append([] if source is None else [source])
    return sources


class ContextEntityRecall(Metric):
    """|entities of the context ∩ entities of the expected output| / |entities of the expected output|."""

    name = "context_entity_recall"
    required_fields = (CaseField.RETRIEVAL_CONTEXT, CaseField.EXPECTED_OUTPUT)

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        expected, found = await asyncio.gather(
            session.extract(case.expected_output or "", ExtractKind.ENTITIES),
            session.extract("\n\n".join(case.retrieval_context or []), ExtractKind.ENTITIES),
        )
        distinct: dict[str, str] = {}
        for entity in expected:
            distinct.setdefault(scores.normalise_entity(entity), entity)
        expected = list(distinct.values())
        score = scores.context_entity_recall(expected, found)
        found_keys = {scores.normalise_entity(e) for e in found}
        missed = [e for e in expected if scores.normalise_entity(e) not in found_keys]
        reason = f"{len(expected) - len(missed)} of {len(expected)} expected entities appear in the context"
        if missed:
            reason += f"; missing: {listing(missed, 5)}"
        records = [
            VerdictRecord(kind="entity", item=e, verdict="no" if e in missed else "yes", check="in_context")
            for e in expected
        ]
        return Scored(score, reason, records, {"context_entities": found})
