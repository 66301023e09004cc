"""`OfflineJudge`: the `Judge` protocol on a feature-based grounding model and packaged embeddings.

It needs no API key and no network, so ragpulse works the moment it is installed, and it is the
cheap first stage of the cascade: every verdict carries a calibrated probability in `confidence`,
and the collector sends the uncertain ones to the LLM judge. It cannot judge free-form criteria
(G-Eval rubrics, aspect critiques): those operations say so instead of guessing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np

from evaluators.judges.base import (
    ExtractKind,
    JudgeInfo,
    Questions,
    RubricScore,
    Usage,
    Verdict,
    VerdictTask,
)
from evaluators.offline.embedder import Embedder, make_embedder
from evaluators.offline.features import GroundingFeaturizer, prepare, relevance_features
from evaluators.offline.idf import IdfTable, default_idf
from evaluators.offline.model import LogisticModel, load_models
from evaluators.offline.reasons import supported_reason, unsupported_reason
from evaluators.offline.text import (
    clauses,
    content_stems,
    entities,
    is_factual,
    is_noncommittal,
    numbers,
    sentences,
)
from evaluators.scores import UndefinedScoreError

GROUNDING_MODEL = "ragpulse-grounding-v1"
_QUESTION_MEMORY = 4096  # claims remembered with the question they answer (see `extract`)


def answer_claims(text: str) -> list[str]:
    """Claims of an answer: its factual sentences, split into clauses where they join facts."""
    return [c for s in sentences(text) if is_factual(s) for c in clauses(s) if is_factual(c)]


class OfflineJudge:
    """Feature-based grounding model + wordllama (or MiniLM) embeddings; deterministic, CPU only."""

    def __init__(
        self,
        *,
        embedder: Embedder | str = "wordllama",
        models: Mapping[str, LogisticModel] | None = None,
        idf: IdfTable | None = None,
    ) -> None:
        self.embedder = make_embedder(embedder) if isinstance(embedder, str) else embedder
        self.models = dict(models or load_models())
        self.idf = idf or default_idf()
        self.featurizer = GroundingFeaturizer(self.idf)
        self.info = JudgeInfo(judge="offline", model=f"{GROUNDING_MODEL}+{self.embedder.name}")
        self._calls = 0
        self._questions: OrderedDict[str, str] = OrderedDict()

    # -- decomposition -------------------------------------------------------------------------

    async def extract(
        self, text: str, kind: ExtractKind, *, question: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Claims: sentences then clauses. The question given here is remembered per claim, so
        `verdicts` can treat a claim that only restates the question as neutral."""
        self._calls += 1
        kind = ExtractKind(kind)
        if kind is ExtractKind.CLAIMS:
            items = answer_claims(text)
            if question:
                for claim in items:
                    self._remember(claim, question)
        elif kind is ExtractKind.STATEMENTS:
            items = [s for s in sentences(text) if content_stems(s)]
        elif kind is ExtractKind.TRUTHS:
            items = sorted((s for s in sentences(text) if is_factual(s)), key=self._information, reverse=True)
        else:
            items = list(dict.fromkeys([*entities(text, common=self.idf.common), *numbers(text)]))
        return items[:limit] if limit is not None else items

    def _information(self, sentence: str) -> float:
        return sum(self.idf(s) for s in set(content_stems(sentence)))

    def _remember(self, claim: str, question: str) -> None:
        self._questions[claim] = question
        self._questions.move_to_end(claim)
        while len(self._questions) > _QUESTION_MEMORY:
            self._questions.popitem(last=False)

    # -- verdicts --------------------------------------------------------------------------------

    async def verdicts(
        self, items: Sequence[str], references: Sequence[str], task: VerdictTask, *, sample: int = 0
    ) -> list[Verdict]:
        """One verdict per item. `sample` is ignored: the model is deterministic, votes agree."""
        self._calls += 1
        task = VerdictTask(task)
        if not items:
            return []
        if task is VerdictTask.SATISFIES:
            reason = "the offline judge cannot judge custom criteria: configure an LLM judge"
            return [Verdict("idk", reason) for _ in items]
        refs = [r for r in references if r and r.strip()]
        if not refs:
            return [Verdict("idk", "no reference text to judge against") for _ in items]
        if task is VerdictTask.SUPPORTED:
            return [self._supported(item, refs) for item in items]
        if task is VerdictTask.CONTRADICTED:
            return [self._contradicted(item, refs) for item in items]
        return self._similar(items, refs, task)

    def _supported(self, item: str, refs: list[str]) -> Verdict:
        if not content_stems(item):
            return Verdict("idk", "no factual content to check")
        ev = self.featurizer.evidence(item, prepare(tuple(refs)), self._questions.get(item, ""))
        model = self.models["grounding"]
        p = model.probability(ev.features)
        if p >= model.threshold:
            return Verdict("yes", supported_reason(ev, p), ev.supporting_nodes, confidence=p)
        if ev.has_conflict and ev.best_window is not None:  # another number, name or polarity there
            return Verdict("no", unsupported_reason(ev, p), (ev.best_window.node,), confidence=1.0 - p)
        return Verdict("idk", unsupported_reason(ev, p), (), confidence=1.0 - p)

    def _contradicted(self, item: str, refs: list[str]) -> Verdict:
        """'yes' needs a specific conflict (swapped number or name, flipped negation) in a passage
        that otherwise matches; absence alone is 'idk', as in deepeval's contradiction mode."""
        claims = answer_claims(item) or [item]
        model, prepared = self.models["grounding"], prepare(tuple(refs))
        judged = []
        for claim in claims:
            ev = self.featurizer.evidence(claim, prepared, self._questions.get(claim, ""))
            judged.append((model.probability(ev.features), ev))
        conflicts = [(p, ev) for p, ev in judged if ev.has_conflict and p < model.threshold]
        if conflicts:
            p, ev = min(conflicts, key=lambda pe: pe[0])
            return Verdict("yes", unsupported_reason(ev, p), (), confidence=1.0 - p)
        p, ev = min(judged, key=lambda pe: pe[0])
        if p >= model.threshold:
            return Verdict("no", supported_reason(ev, p), ev.supporting_nodes, confidence=p)
        return Verdict(
            "idk", "not stated in the context, but nothing there contradicts it: " + unsupported_reason(ev, p)
        )

    def _similar(self, items: Sequence[str], refs: list[str], task: VerdictTask) -> list[Verdict]:
        """RELEVANT (item vs question) and USEFUL (node vs answer): embeddings + word overlap."""
        reference = " ".join(refs)
        model = self.models["relevant" if task is VerdictTask.RELEVANT else "useful"]
        vectors = self.embedder.embed([reference, *items])
        cosines = vectors[1:] @ vectors[0]
        verdicts: list[Verdict] = []
        for item, cosine in zip(items, np.asarray(cosines, dtype=float), strict=True):
            if not content_stems(item):
                verdicts.append(Verdict("no", "no content", confidence=1.0))
                continue
            p = model.probability(relevance_features(item, reference, float(cosine), self.idf))
            word = "relevant to the question" if task is VerdictTask.RELEVANT else "useful for the answer"
            detail = f"(similarity {float(cosine):.2f}, P={p:.2f})"
            if p >= model.threshold:
                verdicts.append(Verdict("yes", f"{word} {detail}", (0,), confidence=p))
            else:
                verdicts.append(Verdict("no", f"not {word} {detail}", (), confidence=1.0 - p))
        return verdicts

    # -- the rest of the protocol ----------------------------------------------------------------

    async def questions(self, answer: str, n: int = 3) -> Questions:
        """The answer itself stands in for generated questions: the similarity variant of answer
        relevancy becomes cosine(query, answer), which needs no generator model."""
        self._calls += 1
        return Questions(questions=(answer,), noncommittal=is_noncommittal(answer))

    async def evaluation_steps(self, criteria: str) -> list[str]:
        raise UndefinedScoreError("the offline judge cannot judge custom criteria: configure an LLM judge")

    async def rubric_score(
        self,
        steps: Sequence[str],
        fields: Mapping[str, str],
        *,
        low: int = 1,
        high: int = 10,
        rubric: str | None = None,
    ) -> RubricScore:
        raise UndefinedScoreError("the offline judge cannot judge custom criteria: configure an LLM judge")

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self._calls += 1
        return self.embedder.embed(list(texts)).astype(float).tolist()

    def usage(self) -> Usage:
        """Calls are counted; an offline judge spends no tokens and no money."""
        return Usage(calls=self._calls)
