"""Citation metrics as Amazon Bedrock's RAG evaluation defines them: citation precision and coverage.

Bedrock (Builtin.CitationPrecision, Builtin.CitationCoverage): precision "measures how many of the cited
passages were correctly cited"; coverage "measures how well the response is supported by the cited
passages and if there are any missing citations". Both are counted here over the answer's sentences:
markers are read by `evaluators.citations_parse` (no judge call), and the judge is asked, for each cited
passage, whether it supports each sentence that cites it. Both metrics ask the same questions, so the
session answers them once for the two.

Judge calls per case: no extraction; one verdict call per distinct cited passage (the sentences citing
it, judged against it alone); none when nothing cites a retrieved passage. With a batching judge,
passages cited by exactly the same sentences share one call (up to `_CHECKS_PER_CALL` of them).

Markers name passages by rank, so these metrics see image passages in place (`reads_images`): a
citation of an image passage is left unjudged (a text judge cannot check it), like a citation on a
sentence that states no fact, and a sentence citing only images is not counted by coverage.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from math import ceil
from typing import Unpack

from evaluators import scores
from evaluators.case import CaseField, TestCase
from evaluators.citations_parse import Citation, CitedSentence, cited_sentences
from evaluators.images import image_positions
from evaluators.judges.base import Verdict, VerdictTask
from evaluators.metrics.base import Metric, MetricOptions, Scored, listing, record
from evaluators.session import JudgeSession

# Checks one batched call carries for passages cited by the same sentences: the session folds checks
# on the same items into one call, and a judge takes at most 8 (other metrics may add theirs).
_CHECKS_PER_CALL = 4
_CHECK = "supported_by_cited_passage"
_IMAGE = "cites an image passage, which a text judge cannot check"


@dataclass(slots=True)
class _Judged:
    """The answer's sentences, which of them state a fact, and a verdict per (sentence, cited passage)."""

    sentences: list[CitedSentence]
    factual: list[bool]
    verdicts: dict[tuple[int, int], Verdict]
    images: frozenset[int]  # positions of the image passages

    def judged(self, citation: Citation) -> bool:
        """A citation is judged unless it names an image passage."""
        return citation.passage not in self.images

    def verdict(self, sentence: int, citation: Citation) -> Verdict:
        """The verdict on one citation, with `supporting_ids` indexing the retrieval context."""
        if citation.passage is None:
            return Verdict("no", citation.problem)
        if citation.passage in self.images:
            return Verdict("idk", _IMAGE)
        judged = self.verdicts[(sentence, citation.passage)]
        return replace(judged, supporting_ids=(citation.passage,) if judged.verdict == "yes" else ())

    def supported(self, sentence: int, citation: Citation) -> bool:
        return self.verdict(sentence, citation).verdict == "yes"


async def _judge_citations(case: TestCase, session: JudgeSession, base: int) -> _Judged:
    passages = list(case.retrieval_context or [])
    ids = getattr(case, "retrieved_context_ids", None)  # when the case carries passage ids
    from evaluators.offline.text import is_factual  # (on use: see citations_parse.cited_sentences)

    found = cited_sentences(case.actual_output or "", len(passages), base=base, ids=ids)
    factual = [is_factual(s.text) for s in found]
    images = frozenset(image_positions(passages))
    by_passage: dict[int, list[int]] = {}
    for index, sentence in enumerate(found):
        for citation in sentence.citations if factual[index] else ():
            if citation.passage is not None and citation.passage not in images:
                by_passage.setdefault(citation.passage, []).append(index)
    by_citers: dict[tuple[int, ...], list[int]] = {}
    for passage, sentences in by_passage.items():
        by_citers.setdefault(tuple(sentences), []).append(passage)
    verdicts: dict[tuple[int, int], Verdict] = {}
    waves = max((ceil(len(cited) / _CHECKS_PER_CALL) for cited in by_citers.values()), default=0)
    for wave in range(waves):
        window = slice(wave * _CHECKS_PER_CALL, (wave + 1) * _CHECKS_PER_CALL)
        asks = [(citers, p) for citers, cited in by_citers.items() for p in cited[window]]
        replies = await asyncio.gather(
            *(
                session.verdicts([found[i].text for i in citers], [passages[p]], VerdictTask.SUPPORTED)
                for citers, p in asks
            )
        )
        for (citers, passage), reply in zip(asks, replies, strict=True):
            verdicts.update(((i, passage), v) for i, v in zip(citers, reply, strict=True))
    return _Judged(found, factual, verdicts, images)


class _CitationMetric(Metric):
    """Options shared by the two citation metrics."""

    required_fields = (CaseField.ACTUAL_OUTPUT, CaseField.RETRIEVAL_CONTEXT)
    reads_images = True  # markers count passages by rank: images stay in place, unjudged

    def __init__(self, *, citation_base: int = 1, **options: Unpack[MetricOptions]) -> None:
        super().__init__(**options)
        if citation_base not in (0, 1):
            raise ValueError("citation_base must be 0 (`[0]` is the first passage) or 1 (`[1]` is)")
        self.citation_base = citation_base


class CitationPrecision(_CitationMetric):
    """Citations whose passage supports the sentence they are attached to / citations (Bedrock).

    A citation of a passage that was not retrieved counts as unsupported. Citations on sentences that
    state no fact ('See [3].') are not judged; an answer without citations is unmeasured, since there
    is no citation to be precise about (citation coverage scores that answer 0).
    """

    name = "citation_precision"

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        judged = await _judge_citations(case, session, self.citation_base)
        cited = [
            (i, citation)
            for i, sentence in enumerate(judged.sentences)
            if judged.factual[i]
            for citation in sentence.citations
        ]
        pairs = [(i, citation) for i, citation in cited if judged.judged(citation)]
        of_images = len(cited) - len(pairs)
        skipped = of_images + sum(
            len(s.citations) for i, s in enumerate(judged.sentences) if not judged.factual[i]
        )
        if not pairs:
            raise scores.UndefinedScoreError(
                f"the answer's {of_images} citation(s) name image passages, which a text judge cannot check"
                if of_images
                else f"the answer's {skipped} citation(s) are on sentences that state no checkable fact"
                if skipped
                else "the answer cites no passage, so citation precision is undefined"
            )
        correct = [judged.supported(i, citation) for i, citation in pairs]
        failing = [
            f"{citation.problem or f'{citation.marker} does not support it'}: {judged.sentences[i].text}"
            for (i, citation), ok in zip(pairs, correct, strict=True)
            if not ok
        ]
        reason = f"{sum(correct)} of {len(pairs)} citations supported by the passage they cite"
        if failing:
            reason += f"; not: {listing(failing)}"
        records = [
            record(
                "citation",
                judged.sentences[i].text,
                judged.verdict(i, citation),
                f"{_CHECK} {citation.marker}",
                source_ids=[citation.passage] if citation.passage is not None else [],
            )
            for i, citation in pairs
        ]
        details = {
            "citations": len(pairs),
            "unjudged_citations": skipped,
            "citation_base": self.citation_base,
        }
        return Scored(scores.verdict_ratio(correct), reason, records, details)


class CitationCoverage(_CitationMetric):
    """Factual sentences supported by a passage they cite / factual sentences (Bedrock).

    Bedrock's coverage asks both whether the cited passages support the response and whether citations
    are missing; so a sentence without a citation is not covered, and neither is one whose citations
    name no retrieved passage. An answer with facts and no citation scores 0.
    """

    name = "citation_coverage"

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        judged = await _judge_citations(case, session, self.citation_base)
        statements = [
            i
            for i, factual in enumerate(judged.factual)
            if factual
            and not (
                judged.sentences[i].citations
                and all(not judged.judged(c) for c in judged.sentences[i].citations)
            )
        ]
        if not statements:
            raise scores.UndefinedScoreError("the answer states no checkable fact to cover")
        records, covered, uncited, failing = [], [], [], []
        for i in statements:
            sentence = judged.sentences[i]
            verdicts = [judged.verdict(i, c) for c in sentence.citations]
            support = tuple(p for v in verdicts for p in v.supporting_ids)
            if not sentence.citations:
                uncited.append(sentence.text)
                why = "cites no passage"
            elif support:
                why = f"supported by {' '.join(c.marker for c in sentence.citations if c.passage in support)}"
            else:
                markers = " ".join(c.marker for c in sentence.citations)
                why = (
                    "; ".join(c.problem for c in sentence.citations if c.problem)
                    or f"{markers} {'does' if len(sentence.citations) == 1 else 'do'} not support it"
                )
                failing.append(f"{why}: {sentence.text}")
            covered.append(bool(support))
            judges = " | ".join(v.reason for v in verdicts if v.reason and v.reason not in why)
            verdict = Verdict("yes" if support else "no", why + (f" ({judges})" if judges else ""), support)
            cited = [c.passage for c in sentence.citations if c.passage is not None]
            records.append(record("statement", sentence.text, verdict, _CHECK, source_ids=cited))
        reason = f"{sum(covered)} of {len(statements)} factual sentences supported by the passages they cite"
        if uncited:
            reason += f"; {len(uncited)} cite nothing: {listing(uncited)}"
        if failing:
            reason += f"; not supported: {listing(failing)}"
        details = {
            "statements": len(statements),
            "uncited": len(uncited),
            "citation_base": self.citation_base,
        }
        return Scored(scores.verdict_ratio(covered), reason, records, details)
