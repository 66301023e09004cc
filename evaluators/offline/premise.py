"""The premise a claim is judged against: the context's sentences that bear on it, within a budget.

A cross-encoder reads a few hundred tokens at most, and its cost grows with every one, so each claim
is judged against the sentences of the retrieved passages that share its rarest words (IDF-weighted
recall of its stems), the best first, plus the sentence before the best one (a pronoun's antecedent),
in their order in the context, up to `budget` words. A context shorter than the budget is read whole.
Training builds its premises with this same function, so the model is trained on what it will see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from evaluators.offline.idf import IdfTable, default_idf
from evaluators.offline.sentences import sentences
from evaluators.offline.text import stems_of

BUDGET_WORDS = 110  # ~150 word pieces: with the claim, about 190 tokens a pair


@dataclass(frozen=True, slots=True)
class Sentence:
    node: int  # index of the passage it comes from
    position: int  # its order in the context
    text: str
    stems: frozenset[str]
    words: int


@dataclass(frozen=True, slots=True)
class Premise:
    text: str
    nodes: tuple[int, ...]  # the passages it quotes, the best-matching first
    best: Sentence | None  # the sentence sharing most of the claim's rare words
    chosen: tuple[Sentence, ...] = ()  # what `text` joins, in context order

    def quoted(self) -> str:
        """The sentences read from the deciding passage (the best one's): what a reason quotes."""
        if self.best is None:
            return ""
        return " ".join(s.text for s in self.chosen if s.node == self.best.node) or self.best.text


@lru_cache(maxsize=256)
def context_sentences(passages: tuple[str, ...]) -> tuple[Sentence, ...]:
    """The passages cut into sentences once per context (every claim of an answer shares them)."""
    out: list[Sentence] = []
    for node, passage in enumerate(passages):
        for text in sentences(passage) or ((passage,) if passage.strip() else ()):
            out.append(Sentence(node, len(out), text, frozenset(stems_of(text)), len(text.split())))
    return tuple(out)


def premise(
    claim: str,
    passages: Sequence[str],
    *,
    budget: int = BUDGET_WORDS,
    idf: IdfTable | None = None,
    exclude: frozenset[int] = frozenset(),
) -> Premise:
    """The premise for `claim`. `exclude` drops sentences by position (training's evidence-removed
    negatives: the same claim against its context without the sentences that state it)."""
    idf = idf or default_idf()
    every = [s for s in context_sentences(tuple(passages)) if s.position not in exclude]
    if not every:
        return Premise("", (), None)
    ranked = rank(claim, every, idf)
    best = ranked[0] if ranked else None
    if sum(s.words for s in every) <= budget:
        chosen = every
    else:
        chosen, used = [], 0
        picks = list(ranked)
        if best is not None:
            before = next((s for s in every if s.position == best.position - 1 and s.node == best.node), None)
            if before is not None:
                picks.insert(1, before)
        seen: set[str] = set()
        for s in picks:
            if (used + s.words > budget and chosen) or s.text in seen:
                continue
            seen.add(s.text)
            chosen.append(s)
            used += s.words
            if used >= budget:
                break
        chosen.sort(key=lambda s: s.position)
    nodes = tuple(dict.fromkeys(([best.node] if best else []) + [s.node for s in chosen]))
    return Premise(_join(chosen), nodes, best, tuple(chosen))


def rank(claim: str, candidates: Sequence[Sentence], idf: IdfTable) -> list[Sentence]:
    """Sentences by the IDF-weighted share of the claim's stems they hold, best first (ties: order)."""
    weights = _weights(claim, idf)
    return sorted(candidates, key=lambda s: (-_share(weights, s), s.position))


def share(claim: str, sentence: Sentence, idf: IdfTable) -> float:
    """The IDF-weighted share of the claim's stems that the sentence holds (0..1)."""
    return _share(_weights(claim, idf), sentence)


def _weights(claim: str, idf: IdfTable) -> dict[str, float]:
    weights = {s: idf(s) for s in set(stems_of(claim))}
    total = sum(weights.values()) or 1.0
    return {s: w / total for s, w in weights.items()}


def _share(weights: dict[str, float], sentence: Sentence) -> float:
    return sum(w for stem, w in weights.items() if stem in sentence.stems)


def _join(chosen: Sequence[Sentence]) -> str:
    parts: list[str] = []
    last: Sentence | None = None
    for s in chosen:
        if last is not None and (s.node != last.node or s.position != last.position + 1):
            parts.append("…")
        parts.append(s.text)
        last = s
    return " ".join(parts)


SHORT_CLAIM_WORDS = 5


def hypothesis(claim: str, question: str = "") -> str:
    """What the model reads as the claim. A short one ('Arthur's Magazine', 'Yes, in 1998') means
    little without the question it answers, so the question comes first."""
    if question and len(claim.split()) < SHORT_CLAIM_WORDS:
        return f"{question.strip()} {claim.strip()}"
    return claim.strip()
