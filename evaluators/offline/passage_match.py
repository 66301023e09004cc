"""A claim's `Terms` scored against passages and windows, cached by text.

The same claim meets the same sentence several times per record (faithfulness against all passages,
hallucination against each one alone), so its exact recalls, soft matches, antonyms and focus
clause are keyed by (terms, text) and computed once. Each value is computed with the operations
`GroundingFeaturizer.evidence` used inline, in the same order: the cache cannot change a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evaluators.offline import alignment
from evaluators.offline.claim_view import Terms, is_content
from evaluators.offline.focus import focus
from evaluators.offline.lexicon import antonym_key, may_oppose, opposites
from evaluators.offline.sentences import Window, passage_parts, windows
from evaluators.offline.text import content_stems, entities, negations_about, words


@dataclass(frozen=True, slots=True)
class PassageScores:
    """A claim's terms against each window of one passage (in `windows(text, 0)` order, which a
    multi-passage `References` concatenates) and against the whole passage."""

    pools: tuple[frozenset[str], ...]  # each window's stems plus the claim's amounts it states
    windows: tuple[float, ...]  # exact recall in each pool
    novel_windows: tuple[float, ...]  # ... of the novel words
    sentences: tuple[float, ...]  # word recall (amounts left out) in each single sentence; 0.0 for pairs
    passage: float  # exact recall in the passage's pool


@lru_cache(maxsize=2048)
def passage_scores(terms: Terms, text: str) -> PassageScores:
    found = windows(text, 0)
    pools = tuple(terms.pool(w.stems, w.parts) for w in found)
    # A pool adds to the window's stems the claim's amounts, which weigh nothing as words, and the
    # claim's compound parts the window writes joined, which count as its words.
    recalls = [terms.recalls(p) for p in pools]
    return PassageScores(
        pools=pools,
        windows=tuple(r[0] for r in recalls),
        novel_windows=tuple(r[1] for r in recalls),
        sentences=tuple(r[2] if w.single else 0.0 for w, r in zip(found, recalls, strict=True)),
        passage=terms.recall(terms.pool(passage_stems(text), passage_parts(text))),
    )


@lru_cache(maxsize=4096)
def passage_stems(text: str) -> frozenset[str]:
    """A passage's content stems (its node's pool for node recall), once per passage text: its
    sentences' when it is ASCII and them joined by spaces (an ASCII word never spans a space)."""
    sentences = [w for w in windows(text, 0) if w.single]
    if text.isascii() and " ".join(w.text for w in sentences) == text:
        return frozenset().union(*(w.stems for w in sentences))
    return frozenset(content_stems(text))


@dataclass(frozen=True, slots=True)
class SoftScores:
    """Per claim word, 1 when its stem is in the window's pool, else its soft match (common words only)."""

    matches: np.ndarray
    recall: float
    novel_recall: float


def soft_scores(terms: Terms, window: Window, pool: frozenset[str]) -> SoftScores:
    return _soft_scores(terms, window.text, pool)


@lru_cache(maxsize=2048)
def _soft_scores(terms: Terms, text: str, pool: frozenset[str]) -> SoftScores:
    matches = np.array([1.0 if s in pool else 0.0 for s in terms.stems])
    todo = [i for i, s in enumerate(terms.stems) if s not in pool and terms.softable[i]]
    if todo:
        vocabulary, window_vectors = window_vocabulary(text)
        if vocabulary:
            # The rows of the words to match, gathered (a copy: the same matrix `alignment.vectors`
            # would stack, so the same products to the last bit; BLAS results depend on shapes).
            vectors, rows = _soft_vectors(terms)
            claim = vectors.take([rows[i] for i in todo], axis=0)
            matches[todo] = alignment.soft_matches(claim, window_vectors)
    matches.setflags(write=False)
    return SoftScores(matches, terms.soft_recall(matches), terms.soft_novel_recall(matches))


@lru_cache(maxsize=1024)
def _soft_vectors(terms: Terms) -> tuple[np.ndarray, dict[int, int]]:
    """Vectors of the words that may be matched softly, and each one's row by word position."""
    rows = {i: row for row, i in enumerate(i for i, ok in enumerate(terms.softable) if ok)}
    found = alignment.vectors([terms.surface[i] for i in rows])
    found.setflags(write=False)
    return found, rows


@lru_cache(maxsize=1024)
def window_vocabulary(text: str) -> tuple[tuple[str, ...], np.ndarray]:
    """A window's content words (surface form, for vectors) and their vectors, once per window."""
    found = window_words(text)
    return found, alignment.vectors(found)


@lru_cache(maxsize=8192)
def window_words(text: str) -> tuple[str, ...]:
    """A window's content words, first occurrences in order (antonyms need no vectors)."""
    return tuple(dict.fromkeys(w for w in words(text) if is_content(w)))


@lru_cache(maxsize=8192)
def _antonym_keys(text: str) -> frozenset[str]:
    return frozenset(antonym_key(w) for w in window_words(text))


def antonyms(terms: Terms, window: Window) -> tuple[tuple[str, str], ...]:
    """Claim words facing their antonym in the window ('always refundable' vs 'not refundable'
    is negation; 'increased' vs 'decreased' is this)."""
    return _antonyms(terms, window.text, window.stems)


@lru_cache(maxsize=1024)
def _antonyms(terms: Terms, text: str, stems: frozenset[str]) -> tuple[tuple[str, str], ...]:
    keys, found = _antonym_keys(text), []
    for word, s in zip(terms.surface, terms.stems, strict=True):
        if s not in stems and may_oppose(word, keys):
            found += [(word, w) for w in opposites(word, window_words(text)) if w not in terms.surface]
    return tuple(found[:3])


def clause_of(terms: Terms, sentence: Window) -> tuple[str | None, int]:
    """The clause of `sentence` the claim is about (see `focus`; None when it is the whole sentence)
    and the negations to compare the claim's with: those of the clause, else of the sentence, that
    can deny something the claim says and that its question does not state (`negations_about`)."""
    return _clause_of(terms, sentence.text, sentence.stems)


@lru_cache(maxsize=2048)
def _clause_of(terms: Terms, text: str, stems: frozenset[str]) -> tuple[str | None, int]:
    clause = focus(text, stems, terms.stems, terms.word_list, terms.view.capitalised)
    claim = frozenset(terms.stems)
    presupposed = terms.view.asked - claim if terms.view.asked_negated else frozenset()
    return clause, negations_about(clause or text, claim, presupposed)


@lru_cache(maxsize=2048)
def window_names(text: str, common: frozenset[str]) -> tuple[str, ...]:
    """The names a window (or clause) gives, lower-cased."""
    return tuple(n.lower() for n in entities(text, common=common))
