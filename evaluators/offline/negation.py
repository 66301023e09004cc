"""Where the negations of one text stand and what they deny (`polarity` compares two texts' negations).

A negation is a word ('not', 'never', 'не', 'nicht'), an "n't" ending or a CJK negation character;
'not-for-profit' and bounds ('no more than 4 g') negate nothing. What it denies is the stretch of text
it stands in, between punctuation marks and conjunctions: 'historians call it the Second Revolt of
Judea, not counting the Kitos War' denies nothing about the revolt.
"""

from __future__ import annotations

import re
from functools import lru_cache

from evaluators.offline import multilingual as ml
from evaluators.offline import script_tokens
from evaluators.offline.text import NEGATIONS, content_stems

# Negations are counted on unsplit words: 'not-for-profit' and 'no-nonsense' negate nothing.
_UNSPLIT_WORD = re.compile(r"[a-z][a-z'\-]*", re.ASCII)
_INNER_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")

# 'not more than 4 g' is a bound ('at most 4 g'), not a denial: the negation is not counted.
_BOUND = re.compile(
    r"\b(?:not|no|never|(?:do|does|did|must|should|may|can|could|will)(?: not|n't))"
    r"(?: take| use| give| be)?\s+(?:(?:more|less|fewer|later|earlier|longer|higher|lower) than|exceed)"
)


def _is_negation(word: str) -> bool:
    return word in NEGATIONS or word.endswith("n't")


def _unbounded(text: str) -> str:
    """`text` lower-cased, its bounds blanked out character for character (positions stay)."""
    return _BOUND.sub(lambda m: " " * len(m.group()), text.lower().replace("’", "'"))


def negation_count(text: str) -> int:
    """Negation words and "n't" endings (CJK: negation characters), hyphenated compounds and bounds
    ('no more than', 'must not exceed') excepted."""
    lowered, plain = _unbounded(text), True
    if not lowered.isascii():
        lowered, plain = ml.token_text(lowered)
    if plain:
        return sum(1 for w in _UNSPLIT_WORD.findall(lowered) if _is_negation(w))
    tokens = script_tokens.unicode_words(_INNER_HYPHEN.sub("", lowered))
    return sum(1 for w in tokens if _is_negation(w)) + len(ml.CJK_NEGATION.findall(text))


# What a negation can deny: the stretch of text it stands in, between punctuation marks and conjunctions.
_STRETCH_BREAK = re.compile(
    r"[,;:()\[\]\"“”«»—–]|\s-\s|[.!?](?=\s|$)|\s(?:and|but|while|whereas|although|though|yet)\s",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def negation_scopes(text: str) -> tuple[frozenset[str] | None, ...]:
    """One entry per negation of `text`: the content stems of its stretch (between punctuation marks and
    conjunctions), or None (the whole text) where text is not read word by word (CJK negation characters)."""
    return _scopes(text, whole=True)


@lru_cache(maxsize=4096)
def denied_scopes(text: str) -> tuple[frozenset[str] | None, ...]:
    """`negation_scopes`, narrowed to what each negation denies: its stretch after the first negation
    ('with no waste created whatsoever' -> 'waste created whatsoever')."""
    return _scopes(text, whole=False)


def _scopes(text: str, *, whole: bool) -> tuple[frozenset[str] | None, ...]:
    total = negation_count(text)
    if not total:
        return ()
    lowered = text.lower().replace("’", "'")
    if not lowered.isascii() and not ml.token_text(lowered)[1]:
        return (None,) * total
    return tuple(
        scope
        for stretch in negated_stretches(text)
        for scope in (frozenset(content_stems(stretch if whole else _after_negation(stretch))),)
        * negation_count(stretch)
    )


def _after_negation(stretch: str) -> str:
    at = next((m for m in _UNSPLIT_WORD.finditer(_unbounded(stretch)) if _is_negation(m.group())), None)
    return stretch[at.end() :] if at is not None else stretch


@lru_cache(maxsize=4096)
def negated_stretches(text: str) -> tuple[str, ...]:
    """The stretches of `text` (between punctuation marks and conjunctions) that hold a negation."""
    if not negation_count(text):
        return ()
    return tuple(stretch for stretch in _STRETCH_BREAK.split(text) if negation_count(stretch))


@lru_cache(maxsize=4096)
def denied_predicates(text: str) -> tuple[str, ...] | None:
    """What each negation of `text` denies: the rest of its stretch after it ('The office is not open on
    Sundays' -> 'open on Sundays'; 'Her father's lawyer said he had no convictions' -> 'convictions').
    None where text is not read word by word."""
    if not text.replace("’", "'").isascii():
        return None
    return tuple(_after_negation(stretch) for stretch in negated_stretches(text))


@lru_cache(maxsize=4096)
def denied_stems(text: str) -> frozenset[str] | None:
    """The content stems of what the negations of `text` deny (`denied_predicates`), or None."""
    predicates = denied_predicates(text)
    return None if predicates is None else frozenset(s for p in predicates for s in content_stems(p))


def negations_about(text: str, stems: frozenset[str], presupposed: frozenset[str] = frozenset()) -> int:
    """The negations of `text` that can deny what a claim with these content stems says: those whose
    stretch shares a word with it. In 'historians also call it the Second Revolt of Judea, not
    counting the Kitos War' the 'not' denies nothing about 'the Second Revolt of Judea'. Nor does a
    negation the question already states (`presupposed`: a negated question's words the claim lacks):
    'The section around the River Ribble' answers 'What section was never completed?'."""
    return _about(negation_scopes(text), stems, presupposed)


def negation_parities(
    text: str, stems: frozenset[str], presupposed: frozenset[str] = frozenset()
) -> frozenset[int]:
    """The parities the negations of `text` about a claim can have: counted where their stretch shares a
    word with the claim (`negations_about`), and where what they deny does. A flip needs the claim's
    parity to differ from both. 'An Ohio man accused of assaulting three girls has pleaded not guilty
    to 19 counts' shares its stretch with 'He was accused of assaulting three girls' but denies none of
    it; 'an experimental build without the GIL' denies no word of the claim 'an experimental build
    without it', yet its negation is the claim's, as the stretch's count says."""
    loose = negations_about(text, stems, presupposed)
    return frozenset({loose % 2, _about(denied_scopes(text), stems, presupposed) % 2})


def _about(
    scopes: tuple[frozenset[str] | None, ...], stems: frozenset[str], presupposed: frozenset[str]
) -> int:
    """How many of `scopes` share a word with the claim and none with what its question presupposes."""
    return sum(1 for s in scopes if s is None or (not s.isdisjoint(stems) and s.isdisjoint(presupposed)))
