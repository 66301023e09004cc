"""`OfflineJudge`: the `Judge` protocol on a feature-based grounding model and packaged embeddings.

It needs no API key and no network, so ragpulse works the moment it is installed, and it is the
cheap first stage of the cascade: every verdict carries a calibrated probability in `confidence`,
and the collector sends the uncertain ones to the LLM judge. It cannot judge free-form criteria
(G-Eval rubrics, aspect critiques, safety rubrics, opinions): those operations say so instead of guessing.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from functools import lru_cache

from evaluators.judges.base import (
    ExtractKind,
    JudgeInfo,
    Questions,
    RubricScore,
    Usage,
    Verdict,
    VerdictTask,
)
from evaluators.offline.answer_words import HEAD_NOUNS
from evaluators.offline.claims import answer_claims, claims_with_questions
from evaluators.offline.embedder import Embedder, make_embedder
from evaluators.offline.features import FEATURE_NAMES, Evidence, GroundingFeaturizer, References, prepare
from evaluators.offline.idf import IdfTable, default_idf
from evaluators.offline.lexicon import abstention_topic
from evaluators.offline.model import Model, load_models
from evaluators.offline.question_type import asked, supplies
from evaluators.offline.reasons import (
    absent_reason,
    answers_reason,
    contradicted_reason,
    stated_reason,
    supported_reason,
    unanswered_reason,
    unsupported_reason,
)
from evaluators.offline.refusal import refusal_verdict
from evaluators.offline.relevance import RelevanceScorer
from evaluators.offline.sentences import sentences
from evaluators.offline.text import entities, is_factual, is_noncommittal, numbers, stems_of
from evaluators.scores import UndefinedScoreError

GROUNDING_MODEL = "ragpulse-grounding-v2"
_PREPOSITION = re.compile(r"\s(of|for|on|in|about)\s")
# A topic counts as answered when a window matches this much of it (soft recall) and no rarer word of
# it is missing ('warranty' missing from a blender's specs is absence; a missing 'wrote' is phrasing).
_ANSWERED_SOFT, _ANSWERED_RAREST_MISSING = 0.6, 0.3
_SOFT_RECALL, _MAX_MISSING = FEATURE_NAMES.index("soft_recall_window"), FEATURE_NAMES.index("max_missing_idf")
_QUESTION_MEMORY = 4096  # claims remembered with the question they answer (see `extract`)
_EVIDENCE_MEMORY = 1024  # (claim, passages, question) evidence kept for the record's other metrics
_NEEDS_LLM = "the offline judge cannot judge {what}: configure an LLM judge"


class OfflineJudge:
    """Feature-based grounding model + wordllama (or MiniLM) embeddings; deterministic, CPU only."""

    def __init__(
        self,
        *,
        embedder: Embedder | str = "wordllama",
        models: Mapping[str, Model] | None = None,
        idf: IdfTable | None = None,
    ) -> None:
        self.embedder = make_embedder(embedder) if isinstance(embedder, str) else embedder
        self.models = dict(models or load_models())
        self.idf = idf or default_idf()
        self.featurizer = GroundingFeaturizer(self.idf)
        self.grounding, self.contradiction = self.models["grounding"], self.models["contradiction"]
        self.relevance = RelevanceScorer(self.models, self.embedder, self.idf)
        self.info = JudgeInfo(judge="offline", model=f"{GROUNDING_MODEL}+{self.embedder.name}")
        self._calls = 0
        self._questions: OrderedDict[str, str] = OrderedDict()
        self._questions_lock = threading.Lock()  # metrics may run in threads: an LRU is no atomic dict
        self._evidence = lru_cache(maxsize=_EVIDENCE_MEMORY)(self._evidence_of)
        # P(supported) of features: faithfulness and hallucination ask it of the same (cached) evidence
        self._p_supported = lru_cache(maxsize=_EVIDENCE_MEMORY)(self.grounding.probability)

    # -- decomposition -------------------------------------------------------------------------

    async def extract(
        self, text: str, kind: ExtractKind, *, question: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Claims: sentences then clauses. The question given here is remembered per claim, so
        `verdicts` can treat a claim that only restates the question as neutral. Opinions it cannot
        tell from facts: bias and toxicity are unmeasured rather than a score of 'no opinion'."""
        kind = ExtractKind(kind)
        if kind is ExtractKind.OPINIONS:
            raise UndefinedScoreError(_NEEDS_LLM.format(what="opinions for bias or toxicity"))
        self._calls += 1
        if kind is ExtractKind.CLAIMS:
            judged_with = claims_with_questions(text, question or "")
            items = [claim for claim, _ in judged_with]
            if question:
                for claim, asked in judged_with:
                    self._remember(claim, asked)
        elif kind is ExtractKind.STATEMENTS:
            items = [s for s in sentences(text) if stems_of(s)]
        elif kind is ExtractKind.TRUTHS:
            items = sorted((s for s in sentences(text) if is_factual(s)), key=self._information, reverse=True)
        else:
            items = list(dict.fromkeys([*entities(text, common=self.idf.common), *numbers(text)]))
        return items[:limit] if limit is not None else items

    def _information(self, sentence: str) -> float:
        return sum(self.idf(s) for s in set(stems_of(sentence)))

    def _remember(self, claim: str, question: str) -> None:
        with self._questions_lock:
            self._questions[claim] = question
            self._questions.move_to_end(claim)
            while len(self._questions) > _QUESTION_MEMORY:
                self._questions.popitem(last=False)

    def _question(self, claim: str) -> str:
        """The question `claim` was extracted for ('' when unknown)."""
        with self._questions_lock:
            return self._questions.get(claim, "")

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
            reason = _NEEDS_LLM.format(what="free-form criteria (custom, safety, conversations, pairwise)")
            return [Verdict("idk", reason) for _ in items]
        if task is VerdictTask.REFUSES:
            return [refusal_verdict(item) for item in items]
        refs = [r for r in references if r and r.strip()]
        if not refs:
            return [Verdict("idk", "no reference text to judge against") for _ in items]
        if task is VerdictTask.ANSWERABLE:
            return [self._answerable(item, prepare(tuple(refs))) for item in items]
        if task is VerdictTask.SUPPORTED:
            return [self._supported(item, refs) for item in items]
        if task is VerdictTask.CONTRADICTED:
            # Asked both ways: faithfulness asks whether claims are contradicted by the passages,
            # hallucination whether passages are contradicted by the answer. Claims are always checked
            # against passages (a passage holds more than a claim: checked the other way round, every
            # extra fact would look like a conflict), and the side holding the longest text is the passages.
            if max(len(item) for item in items) > max(len(r) for r in refs):
                return self._contradicted_passages(list(items), refs)
            return [self._contradicted(item, refs) for item in items]
        return self.relevance.verdicts(items, " ".join(refs), task)

    def _supported(self, item: str, refs: list[str]) -> Verdict:
        if not stems_of(item):
            return Verdict("idk", "no factual content to check")
        prepared = prepare(tuple(refs))
        topic = abstention_topic(item)
        if topic is not None:
            return self._abstention(topic, prepared)
        ev = self._evidence(item, prepared.texts, self._question(item))
        p = self._p_supported(ev.features)
        # A specific conflict outranks word overlap: '4 weeks' where the matching sentence says 8
        # shares every other word with it.
        p_contradicted = self._p_contradicted(ev)
        if p_contradicted >= self.contradiction.threshold and ev.best_window is not None:
            reason = contradicted_reason(ev, p_contradicted)
            return Verdict("no", reason, (ev.best_window.node,), confidence=min(1.0 - p, p_contradicted))
        if p >= self.grounding.threshold:
            return Verdict("yes", supported_reason(ev, p), ev.supporting_nodes, confidence=p)
        return Verdict("idk", unsupported_reason(ev, p), (), confidence=1.0 - p)

    def _abstention(self, topic: str, refs: References) -> Verdict:
        """'The documents do not mention X': right when the context lacks X, wrong when it states X."""
        ev, p = self._stated(topic, refs)
        if p >= self.grounding.threshold:
            return Verdict("no", stated_reason(topic, ev, p), ev.supporting_nodes, confidence=p)
        return Verdict("yes", absent_reason(topic, p), (), confidence=1.0 - p)

    def _answerable(self, question: str, refs: References) -> Verdict:
        """Whether the passages answer the question. One whose answer type is known ('when' asks a time)
        needs a passage that supplies it: 'the Lisbon office is at Rua Augusta 10' has the question's
        words, not when it opens. Others: the abstention check, asked the other way round."""
        if asked(question):
            answered = self._answered(question, refs)
            if answered is None:
                return Verdict("no", unanswered_reason(question, None))
            node = answered.best_window.node if answered.best_window is not None else 0  # (never None here)
            return Verdict("yes", answers_reason(question, answered, None), (node,))
        ev, p = self._stated(question, refs)
        if p >= self.grounding.threshold:
            return Verdict("yes", answers_reason(question, ev, p), ev.supporting_nodes, confidence=p)
        return Verdict("no", unanswered_reason(question, p), (), confidence=1.0 - p)

    def _stated(self, topic: str, refs: References) -> tuple[Evidence, float]:
        """Evidence that the context states a topic or answers a question, and P(stated)."""
        ev = self.featurizer.evidence(topic, refs)
        p = self._p_supported(ev.features)
        answered = self._answered(topic, refs) if p < self.grounding.threshold else None
        return (answered, max(p, self.grounding.threshold)) if answered is not None else (ev, p)

    def _answered(self, topic: str, refs: References) -> Evidence | None:
        """Evidence that the context answers a topic phrased as a question ('who wrote X', 'the
        length of the free trial'): a window holds the topic's words, its head noun aside ('length'),
        and supplies what it asks (a name, an amount: '30-day free trial')."""
        question = topic if asked(topic) else f"What is {topic}?"
        types = asked(question)
        lead, *rest = _PREPOSITION.split(topic, maxsplit=1)  # the head noun comes before 'of', 'for', ...
        subject = " ".join([*(w for w in lead.split() if w.lower() not in HEAD_NOUNS), *rest])
        if not types or not stems_of(subject):
            return None
        ev = self.featurizer.evidence(subject, refs)
        soft, rarest_missing = ev.features[_SOFT_RECALL], ev.features[_MAX_MISSING]
        if ev.best_window is None or soft < _ANSWERED_SOFT or rarest_missing >= _ANSWERED_RAREST_MISSING:
            return None
        return ev if supplies(ev.best_window.text, question, self.idf.common, types) else None

    def _p_contradicted(self, ev: Evidence) -> float:
        return self.contradiction.probability(ev.features) if ev.has_conflict else 0.0

    def _contradicted(self, item: str, refs: list[str]) -> Verdict:
        """Whether the passages contradict the claims of `item` (faithfulness' contradiction mode).
        'yes' needs a specific conflict (another number, date or name, a flipped negation or an
        antonym) in a passage that otherwise matches; absence alone is 'idk', as in deepeval."""
        judged = self._judge_claims(answer_claims(item) or [item], tuple(refs))
        if not judged:
            return Verdict("idk", "no factual content to check")
        p_contradicted, _, ev = max(judged, key=lambda j: j[0])
        if p_contradicted >= self.contradiction.threshold:
            return Verdict("yes", contradicted_reason(ev, p_contradicted), (), confidence=p_contradicted)
        _, p_supported, ev = min(judged, key=lambda j: j[1])
        if p_supported >= self.grounding.threshold:
            return Verdict(
                "no", supported_reason(ev, p_supported), ev.supporting_nodes, confidence=1.0 - p_contradicted
            )
        return _uncontradicted(p_contradicted)

    def _contradicted_passages(self, passages: list[str], answers: list[str]) -> list[Verdict]:
        """Per passage, whether the answers' claims contradict it (hallucination's question). Each claim
        is judged once against all the passages, as faithfulness judges it (the same evidence, cached),
        and a conflict is laid at the passage that states otherwise (the window the claim matches best,
        or the sentence matching the rest of the claim when a value moved there). A sentence of
        another passage that only resembles the claim (another product's price, another city's
        office) does not contradict it; judged passage by passage, it would."""
        judged = self._judge_claims([c for a in answers for c in (answer_claims(a) or [a])], tuple(passages))
        if not judged:
            return [Verdict("idk", "no factual content to check") for _ in passages]
        worst: dict[int, tuple[float, Evidence]] = {}  # per passage, its most contradicted claim
        for p_contradicted, _, ev in judged:
            window = ev.conflict_window or ev.best_window
            if window is not None:
                node = window.node
                if node not in worst or p_contradicted > worst[node][0]:
                    worst[node] = (p_contradicted, ev)
        verdicts = []
        for node in range(len(passages)):
            p_worst, evidence = worst.get(node, (0.0, None))
            if evidence is not None and p_worst >= self.contradiction.threshold:
                verdicts.append(
                    Verdict("yes", contradicted_reason(evidence, p_worst), (), confidence=p_worst)
                )
            else:
                verdicts.append(_uncontradicted(p_worst))
        return verdicts

    def _judge_claims(
        self, claims: list[str], references: tuple[str, ...]
    ) -> list[tuple[float, float, Evidence]]:
        """(P(contradicted), P(supported), evidence) of each checkable claim against the references."""
        judged = []
        for claim in claims:
            if stems_of(claim) and abstention_topic(claim) is None:
                ev = self._evidence(claim, references, self._question(claim))
                judged.append((self._p_contradicted(ev), self._p_supported(ev.features), ev))
        return judged

    def _evidence_of(self, claim: str, references: tuple[str, ...], question: str) -> Evidence:
        """A claim's evidence against the references: cached (`_evidence`), since faithfulness and
        hallucination judge the same claims against the same passages."""
        return self.featurizer.evidence(claim, prepare(references), question)

    # -- the rest of the protocol ----------------------------------------------------------------

    async def questions(self, answer: str, n: int = 3) -> Questions:
        """The answer itself stands in for generated questions: the similarity variant of answer
        relevancy becomes cosine(query, answer), which needs no generator model."""
        self._calls += 1
        return Questions(questions=(answer,), noncommittal=is_noncommittal(answer))

    async def evaluation_steps(self, criteria: str) -> list[str]:
        raise UndefinedScoreError(_NEEDS_LLM.format(what="custom criteria"))

    async def rubric_score(
        self,
        steps: Sequence[str],
        fields: Mapping[str, str],
        *,
        low: int = 1,
        high: int = 10,
        rubric: str | None = None,
    ) -> RubricScore:
        raise UndefinedScoreError(_NEEDS_LLM.format(what="custom criteria"))

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self._calls += 1
        return self.embedder.embed(list(texts)).astype(float).tolist()

    def usage(self) -> Usage:
        """Calls are counted; an offline judge spends no tokens and no money."""
        return Usage(calls=self._calls)


def _uncontradicted(p_contradicted: float) -> Verdict:
    return Verdict(
        "idk",
        f"not stated in the context, but nothing there contradicts it (P(contradicted)={p_contradicted:.2f})",
        confidence=1.0 - p_contradicted,
    )
