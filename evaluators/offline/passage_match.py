"""A claim's `Terms` scored against passages and windows, cached by text.

The same claim meets the same sentence several times per record (faithfulness against all passages,
hallucination against each one alone), so its exact recalls, soft matches, antonyms and focus
clause are keyed by (terms, text) and computed once; soft matches are aligned once per sentence and
claim words (`sentence_soft`), a pair window taking the better of its two sentences'. Each value is
computed with the operations `GroundingFeaturizer.evidence` used inline, in the same order: the
cache cannot change a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evaluators.offline import alignment
from evaluators.offline.claim_view import Terms
from evaluators.offline.focus import focus
from evaluators.offline.lexicon import antonym_key, complement_stems, complements, may_oppose, opposites
from evaluators.offline.negation import (
    denied_predicates,
    denied_stems,
    negated_stretches,
    negation_count,
    negation_parities,
)
from evaluators.offline.sentences import Window, glued_joins, passage_parts, windows
from evaluators.offline.text import content_stems, content_words, entities, stem


@dataclass(frozen=True, slots=True)
class PassageScores:
    """A claim's terms against each window of one passage (in `windows(text, 0)` order, which a
    multi-passage `References` concatenates) and against the whole passage."""

    pools: tuple[frozenset[str], ...]  # each window's stems plus the claim's amounts it states
    windows: tuple[float, ...]  # exact recall in each pool
    novel_windows: tuple[float, ...]  # ... of the novel words
    sentences: tuple[float, ...]  # word recall (amounts left out) in each single sentence; 0.0 for pairs
    passage: float  # exact recall in the passage's pool
    restated: frozenset[str]  # the claim's stems it restates by their complement (`restated_by_complement`)


@lru_cache(maxsize=512)  # per claim (its Terms, ~5 KB, in the key): a record's metrics
def passage_scores(terms: Terms, text: str) -> PassageScores:
    found = windows(text, 0)
    # A pool adds to the window's stems the claim's amounts, which weigh nothing as words, the claim's
    # compound parts the window writes joined, which count as its words, and the claim's words it
    # restates by their complement under the other polarity ('not allowed' for 'prohibited').
    by_sentence: dict[str, frozenset[str]] = {}
    if not _complement_stems(terms).isdisjoint(passage_stems(text)):  # (most passages have none)
        by_sentence = {w.text: restated_by_complement(terms, w.text, w.stems) for w in found if w.single}
    in_passage = frozenset().union(*by_sentence.values())
    if in_passage:  # (rare: most sentences restate nothing)
        restated = [frozenset().union(*(by_sentence[s] for s in w.sentences)) for w in found]
        pools = tuple(terms.pool(w.stems | r, w.parts) for w, r in zip(found, restated, strict=True))
    else:
        pools = tuple(terms.pool(w.stems, w.parts) for w in found)
    recalls = [terms.recalls(p) for p in pools]
    stems = passage_stems(text) | in_passage if in_passage else passage_stems(text)
    return PassageScores(
        pools=pools,
        windows=tuple(r[0] for r in recalls),
        novel_windows=tuple(r[1] for r in recalls),
        sentences=tuple(r[2] if w.single else 0.0 for w, r in zip(found, recalls, strict=True)),
        passage=terms.recall(terms.pool(stems, passage_parts(text))),
        restated=in_passage,
    )


def restated_by_complement(terms: Terms, sentence: str, stems: frozenset[str]) -> frozenset[str]:
    """The claim's stems that `sentence` restates by their complement under the other polarity: 'is not
    allowed' restates 'prohibited', and 'is closed' restates 'is not open' (`lexicon.complements`: not
    every antonym, 'not released' is no arrest). One side's word must stand in what a negation of its
    side denies, the other's not (`one_side_denies`)."""
    if _complement_stems(terms).isdisjoint(stems):  # `stems`: the sentence's (most have no complement)
        return frozenset()
    return _restated(terms, sentence)


@lru_cache(maxsize=512)  # per claim (its Terms, ~5 KB, in the key): a record's metrics
def _restated(terms: Terms, sentence: str) -> frozenset[str]:
    if not (
        denied_stems(terms.view.claim) or denied_stems(sentence) or _odd(terms.view.claim) or _odd(sentence)
    ):
        return frozenset()  # neither side denies anything: an antonym there is a contradiction
    keys = antonym_keys(sentence)
    return frozenset(
        s
        for word, s in zip(terms.surface, terms.stems, strict=True)
        if may_oppose(word, keys)
        and any(
            one_side_denies(word, terms.view.claim, other, sentence)
            for other in complements(word, window_words(sentence))
        )
    )


@lru_cache(maxsize=512)  # per claim (its Terms, ~5 KB, in the key): a record's metrics
def _complement_stems(terms: Terms) -> frozenset[str]:
    """The stems of the claim words' complements (`lexicon.complement_stems`): a sentence without one
    restates nothing."""
    return frozenset().union(*(complement_stems(w) for w in terms.surface))


def one_side_denies(word: str, text: str, other: str, other_text: str) -> bool:
    """Whether exactly one of two words stands in what a negation of its own text denies: then a word and
    its antonym agree ('is not open' and 'is closed'), where 'never forgets ... small' denies nothing of
    'small'. Where a text is not read word by word (`denied_stems` is None), its negation parity decides."""
    return _denied(word, text) != _denied(other, other_text)


def _denied(word: str, text: str) -> bool:
    denied = denied_stems(text)
    return _odd(text) if denied is None else stem(word.lower()) in denied


def _odd(text: str) -> bool:
    """Whether `text`, not read word by word, holds an odd number of negations (False when it is read)."""
    return denied_stems(text) is None and negation_count(text) % 2 == 1


@lru_cache(maxsize=1024)  # per passage: ~10 KB each (docs/offline-judge.md, Memory)
def passage_stems(text: str) -> frozenset[str]:
    """A passage's content stems (its node's pool for node recall), once per passage text: its
    sentences' when it is ASCII and them joined by spaces (an ASCII word never spans a space) or
    glued statements cut apart ('TurboTurbo is ...': two words, `sentences.glued_joins`)."""
    if text.isascii() and glued_joins(text) is not None:
        return frozenset().union(*(w.stems for w in windows(text, 0) if w.single))
    return frozenset(content_stems(text))


@dataclass(frozen=True, slots=True)
class SoftScores:
    """Per claim word, 1 when its stem is in the window's pool, else its soft match (common words only)."""

    matches: np.ndarray
    recall: float
    novel_recall: float


def soft_scores(terms: Terms, window: Window, pool: frozenset[str]) -> SoftScores:
    return _soft_scores(terms, window.sentences, pool)


@lru_cache(maxsize=512)  # per claim (its Terms, ~5 KB, in the key): a record's metrics
def _soft_scores(terms: Terms, sentences: tuple[str, ...], pool: frozenset[str]) -> SoftScores:
    matches = np.array([1.0 if s in pool else 0.0 for s in terms.stems])
    todo = [i for i, s in enumerate(terms.stems) if s not in pool and terms.softable[i]]
    if todo:
        # A window's words are its sentences': a word's best match in a pair is the better of its
        # best matches in each sentence, computed once per sentence for the sentence and both pairs.
        first, *rest = (sentence_soft(terms.soft_words, s) for s in sentences)
        best = np.maximum(first, rest[0]) if rest else first
        matches[todo] = best[[terms.soft_at[i] for i in todo]]
    matches.setflags(write=False)
    return SoftScores(matches, terms.soft_recall(matches), terms.soft_novel_recall(matches))


@lru_cache(maxsize=4096)
def sentence_soft(words: tuple[str, ...], sentence: str) -> np.ndarray:
    """Each word's soft match in the sentence: by the claim's words, not its `Terms`, which differ
    for one claim against passages that do and do not state its amounts."""
    vocabulary, sentence_vectors = window_vocabulary(sentence)
    if not vocabulary:
        return np.zeros(len(words), dtype=np.float32)
    found = alignment.soft_matches(_vectors(words), sentence_vectors)
    found.setflags(write=False)
    return found


@lru_cache(maxsize=512)  # a matrix of word vectors each (docs/offline-judge.md, Memory)
def _vectors(words: tuple[str, ...]) -> np.ndarray:
    found = alignment.vectors(words)
    found.setflags(write=False)
    return found


@lru_cache(maxsize=512)  # a matrix of word vectors each (docs/offline-judge.md, Memory)
def window_vocabulary(text: str) -> tuple[tuple[str, ...], np.ndarray]:
    """A sentence's content words (surface form, for vectors) and their vectors, once per sentence."""
    found = window_words(text)
    return found, alignment.vectors(found)


@lru_cache(maxsize=4096)
def window_words(text: str) -> tuple[str, ...]:
    """A window's content words, first occurrences in order (antonyms need no vectors)."""
    return tuple(dict.fromkeys(content_words(text)))


@lru_cache(maxsize=4096)
def antonym_keys(text: str) -> frozenset[str]:
    """The `antonym_key` of each content word of `text`."""
    return frozenset(antonym_key(w) for w in window_words(text))


def antonyms(terms: Terms, window: Window) -> tuple[tuple[str, str], ...]:
    """Claim words facing their antonym in the window ('always refundable' vs 'not refundable'
    is negation; 'increased' vs 'decreased' is this)."""
    return _antonyms(terms, window.text, window.stems)


@lru_cache(maxsize=512)  # per claim (its Terms, ~5 KB, in the key): a record's metrics
def _antonyms(terms: Terms, text: str, stems: frozenset[str]) -> tuple[tuple[str, str], ...]:
    keys, found = antonym_keys(text), []
    for word, s in zip(terms.surface, terms.stems, strict=True):
        # (a word of the window may give the claim's word another way: 'romance' for 'romantic')
        if s not in stems and antonym_key(word) not in keys and may_oppose(word, keys):
            found += [(word, w) for w in opposites(word, window_words(text)) if w not in terms.surface]
    return tuple(found[:3])


def clause_of(terms: Terms, sentence: Window) -> tuple[str | None, frozenset[int]]:
    """The clause of `sentence` the claim is about (see `focus`; None when it is the whole sentence)
    and the parities to compare the claim's with: of the negations of the clause, else of the
    sentence, that can deny something the claim says and that its question does not state
    (`negation_parities`)."""
    return _clause_of(terms, sentence.text, sentence.stems)


@lru_cache(maxsize=512)  # per claim (its Terms, ~5 KB, in the key): a record's metrics
def _clause_of(terms: Terms, text: str, stems: frozenset[str]) -> tuple[str | None, frozenset[int]]:
    clause = focus(text, stems, terms.stems, terms.word_list, terms.view.capitalised)
    claim = frozenset(terms.stems)
    presupposed = terms.view.asked - claim if terms.view.asked_negated else frozenset()
    return clause, negation_parities(clause or text, claim, presupposed)


@lru_cache(maxsize=2048)
def window_names(text: str, common: frozenset[str]) -> tuple[str, ...]:
    """The names a window (or clause) gives, lower-cased."""
    return tuple(n.lower() for n in entities(text, common=common))


@lru_cache(maxsize=4096)
def denied_names(text: str, common: frozenset[str]) -> tuple[str, ...]:
    """The names in what a negation of `text` denies, lower-cased: 'not open on Sundays' -> 'sundays'
    (not its subject's: 'The beetle described by Darwin cannot be found in San Marino' denies
    nothing of Darwin). Text not read word by word: its negated stretches' names."""
    denied = denied_predicates(text)
    parts = negated_stretches(text) if denied is None else denied
    return tuple(name for part in parts for name in window_names(part, common))
