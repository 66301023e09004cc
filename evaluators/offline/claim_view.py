"""The claim's side of the grounding features, read once per (claim, question) and cached.

Faithfulness judges each claim against all passages; hallucination then judges each passage against
each claim, so one record asks for a claim's evidence 1 + N_passages times. Reading the claim (its
words, stems, IDF weights, quantities and names) for every pair was half of the judge's time.
`claim_view` reads it once. `Terms` are the words it is matched by, which depend on the passages only
through the quantities they support (a supported amount is matched whole, its words leave the word
features); a claim has a handful of such variants. Scores of terms against a passage or a window
are cached by its text, so the same claim against the same sentence is scored once per record,
whichever metric asks. Every value is computed as `GroundingFeaturizer.evidence` always computed it
(same operations, same order): a verdict cannot change with the cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evaluators.offline import alignment
from evaluators.offline.idf import IdfTable
from evaluators.offline.lexicon import opposites
from evaluators.offline.quantities import Quantity, quantities, supports
from evaluators.offline.text import (
    NEGATIONS,
    STOPWORDS,
    Window,
    content_stems,
    entities,
    negation_count,
    stem,
    stems_of,
    windows,
    words,
)

_CLAUSE_WORDS = 4  # shorter claims are answer fragments: negation and antonyms are not compared


def is_content(word: str) -> bool:
    """A word that carries content: not a stopword, a negation or a single character."""
    return len(word) > 1 and word not in STOPWORDS and word not in NEGATIONS


@dataclass(frozen=True, slots=True, eq=False)  # eq=False: hashed by identity, as a cache key
class ClaimView:
    """What a claim brings to every comparison, whatever the passages."""

    claim: str
    idf: IdfTable
    quantities: tuple[Quantity, ...]  # all of the claim's numbers, amounts and dates
    quantity_words: tuple[frozenset[str], ...]  # the words of each
    checked: tuple[Quantity, ...]  # those the question does not already state
    content: tuple[str, ...]  # content words, first occurrences in order
    asked: frozenset[str]  # the question's content stems
    names: tuple[str, ...]  # names the question does not give, dates excepted
    name_words: frozenset[str]
    clause: bool  # long enough for negation and antonyms to be compared
    negation_parity: int

    def terms(self, supported: tuple[bool, ...]) -> Terms:
        """The words matched one by one when the quantities of `checked` flagged here are supported."""
        return _terms(self, supported)


@lru_cache(maxsize=1024)
def claim_view(claim: str, question: str, idf: IdfTable) -> ClaimView:
    asked_quantities = quantities(question) if question else ()
    found = quantities(claim)
    dated = {w for q in found for w in words(q.text)}  # 'March 1889' is a date, not a name
    asked_lower = question.lower()
    names = tuple(
        n
        for n in entities(claim, common=idf.common)
        if n.lower() not in asked_lower and not set(words(n)) <= dated
    )
    return ClaimView(
        claim=claim,
        idf=idf,
        quantities=found,
        quantity_words=tuple(frozenset(words(q.text)) for q in found),
        checked=tuple(q for q in found if not any(supports(a, q) for a in asked_quantities)),
        content=tuple(dict.fromkeys(w for w in words(claim) if is_content(w))),
        asked=frozenset(stems_of(question)) if question else frozenset(),
        names=names,
        name_words=frozenset(w for n in names for w in words(n)),
        clause=len(claim.split()) >= _CLAUSE_WORDS,
        negation_parity=negation_count(claim) % 2,
    )


@dataclass(frozen=True, slots=True, eq=False)
class Terms:
    """A claim's words as matched against passages, with their IDF weights; read-only arrays."""

    surface: tuple[str, ...]
    stems: tuple[str, ...]
    weights: np.ndarray
    novel_mask: np.ndarray  # not already in the question
    softable: tuple[bool, ...]  # may be matched by a synonym (not a number, not a name)
    weight_list: tuple[float, ...]  # `weights` as Python floats (exact recalls sum them in order)
    novel_list: tuple[float, ...]  # the weight of each novel word, 0.0 for the others
    total: float
    novel_total: float
    novel: bool  # some word is novel
    soft_total: float  # the weights summed as numpy sums them (soft recalls divide by it)
    novel_weights: np.ndarray | None  # the novel words' weights, None when every word is novel
    novel_soft_total: float

    def recall(self, pool: frozenset[str], *, novel: bool = False) -> float:
        """IDF-weighted share of the (novel) words whose stem is in `pool`."""
        weights, total = (self.novel_list, self.novel_total) if novel else (self.weight_list, self.total)
        if total <= 0.0:
            return 1.0
        return sum(w for s, w in zip(self.stems, weights, strict=True) if s in pool) / total

    def soft_recall(self, matches: np.ndarray) -> float:
        """Weighted share of the words matched (0..1 each; `matches` aligned with the words)."""
        return float(self.weights @ matches) / self.soft_total if self.soft_total > 0 else 1.0

    def soft_novel_recall(self, matches: np.ndarray) -> float:
        if self.novel_weights is None:
            return self.soft_recall(matches)
        total = self.novel_soft_total
        return float(self.novel_weights @ matches[self.novel_mask]) / total if total > 0 else 1.0


@lru_cache(maxsize=1024)
def _terms(view: ClaimView, supported: tuple[bool, ...]) -> Terms:
    missing = [q for q, ok in zip(view.checked, supported, strict=True) if not ok]
    matched = {
        w for q, qw in zip(view.quantities, view.quantity_words, strict=True) if q not in missing for w in qw
    }
    surface = tuple(w for w in view.content if w not in matched)
    stems = tuple(stem(w) for w in surface)
    weights = np.array([view.idf.weight(s) for s in stems], dtype=float)
    novel_mask = np.array([s not in view.asked for s in stems], dtype=bool)
    weight_list, novel_list = tuple(weights.tolist()), tuple((weights * novel_mask).tolist())
    novel_weights = None if novel_mask.all() else weights[novel_mask]
    for array in (weights, novel_mask, novel_weights):
        if array is not None:
            array.setflags(write=False)
    return Terms(
        surface=surface,
        stems=stems,
        weights=weights,
        novel_mask=novel_mask,
        softable=tuple(not w[0].isdigit() and w not in view.name_words for w in surface),
        weight_list=weight_list,
        novel_list=novel_list,
        total=sum(weight_list),
        novel_total=sum(novel_list),
        novel=bool(novel_mask.any()),
        soft_total=float(weights.sum()),
        novel_weights=novel_weights,
        novel_soft_total=float(novel_weights.sum()) if novel_weights is not None else 0.0,
    )


@lru_cache(maxsize=1024)
def _soft_vectors(terms: Terms) -> tuple[np.ndarray, dict[int, int]]:
    """Vectors of the words that may be matched softly, and each one's row by word position."""
    rows = {i: row for row, i in enumerate(i for i, ok in enumerate(terms.softable) if ok)}
    found = alignment.vectors([terms.surface[i] for i in rows])
    found.setflags(write=False)
    return found, rows


@dataclass(frozen=True, slots=True)
class PassageScores:
    """Exact recalls of a claim's terms in each window of one passage, and in the whole passage."""

    windows: tuple[float, ...]
    novel_windows: tuple[float, ...]
    passage: float


@lru_cache(maxsize=2048)
def passage_scores(terms: Terms, text: str) -> PassageScores:
    """The windows in `windows(text, 0)` order (a multi-passage `References` concatenates them)."""
    found = windows(text, 0)
    return PassageScores(
        windows=tuple(terms.recall(w.stems) for w in found),
        novel_windows=tuple(terms.recall(w.stems, novel=True) for w in found),
        passage=terms.recall(passage_stems(text)),
    )


@lru_cache(maxsize=4096)
def passage_stems(text: str) -> frozenset[str]:
    """A passage's content stems (its node's pool for node recall), once per passage text."""
    return frozenset(content_stems(text))


@lru_cache(maxsize=2048)
def supported_in(view: ClaimView, text: str) -> tuple[bool, ...]:
    """Per quantity of `view.checked`: whether a quantity of the passage states it."""
    found = quantities(text)
    return tuple(any(supports(r, q) for r in found) for q in view.checked)


@dataclass(frozen=True, slots=True)
class SoftScores:
    """Per claim word, 1 when its stem is in the window, else its soft match (common words only)."""

    matches: np.ndarray
    recall: float
    novel_recall: float


def soft_scores(terms: Terms, window: Window) -> SoftScores:
    return _soft_scores(terms, window.text, window.stems)


@lru_cache(maxsize=2048)
def _soft_scores(terms: Terms, text: str, stems: frozenset[str]) -> SoftScores:
    matches = np.array([1.0 if s in stems else 0.0 for s in terms.stems])
    todo = [i for i, s in enumerate(terms.stems) if s not in stems and terms.softable[i]]
    if todo:
        window_words, window_vectors = window_vocabulary(text)
        if window_words:
            # The rows of the words to match, gathered (a copy: the same matrix `alignment.vectors`
            # would stack, so the same products to the last bit; BLAS results depend on shapes).
            vectors, rows = _soft_vectors(terms)
            claim = vectors.take([rows[i] for i in todo], axis=0)
            matches[todo] = alignment.soft_matches(claim, window_vectors)
    matches.setflags(write=False)
    return SoftScores(matches, terms.soft_recall(matches), terms.soft_novel_recall(matches))


@lru_cache(maxsize=8192)
def window_vocabulary(text: str) -> tuple[tuple[str, ...], np.ndarray]:
    """A window's content words (surface form, for vectors) and their vectors, once per window."""
    found = tuple(dict.fromkeys(w for w in words(text) if is_content(w)))
    return found, alignment.vectors(found)


def antonyms(terms: Terms, window: Window) -> tuple[tuple[str, str], ...]:
    """Claim words facing their antonym in the window ('always refundable' vs 'not refundable'
    is negation; 'increased' vs 'decreased' is this)."""
    return _antonyms(terms, window.text, window.stems)


@lru_cache(maxsize=1024)
def _antonyms(terms: Terms, text: str, stems: frozenset[str]) -> tuple[tuple[str, str], ...]:
    window_words, _ = window_vocabulary(text)
    found = []
    for word, s in zip(terms.surface, terms.stems, strict=True):
        if s not in stems:
            found += [(word, other) for other in opposites(word, window_words) if other not in terms.surface]
    return tuple(found[:3])


@lru_cache(maxsize=2048)
def window_names(text: str, common: frozenset[str]) -> tuple[str, ...]:
    """The names a window gives, lower-cased."""
    return tuple(n.lower() for n in entities(text, common=common))
