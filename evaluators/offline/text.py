"""Text analysis for the offline judge: sentences, clauses, content words, numbers, entities, negation.

Everything here is pure, deterministic and cheap (regular expressions plus `nupunkt`'s packaged
sentence model), because the offline judge must evaluate hundreds of cases per second on one core.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

import nupunkt

_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d+(?:[.,:]\d+)*(?:st|nd|rd|th)?%?")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(%|st|nd|rd|th)?(?![\w])")
_NAME_WORD = r"[A-Z](?:[\w’'\-&]|\.(?=[A-Z]))*"
_CAPITALISED = re.compile(rf"\b{_NAME_WORD}(?:\s+(?:(?:of|de|la|van|von|the|and|for)\s+)?{_NAME_WORD})*")
_CLAUSE_BREAK = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|although|though|yet)\s)|\s+(?=whereas\s)")
_NONCOMMITTAL = re.compile(
    r"\b(i (?:do not|don't|cannot|can't) (?:know|say|tell|answer)|i am not sure|i'm not sure|"
    r"no information|not (?:mentioned|provided|specified|stated) in|unable to (?:answer|determine|find)|"
    r"cannot be determined|there is no (?:mention|information))\b",
    re.IGNORECASE,
)

NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "none",
        "nor",
        "neither",
        "without",
        "cannot",
        "nobody",
        "nothing",
        "n't",
        "isn't",
        "wasn't",
        "aren't",
        "weren't",
        "doesn't",
        "didn't",
        "don't",
        "hasn't",
        "haven't",
        "hadn't",
        "won't",
        "wouldn't",
        "can't",
        "couldn't",
        "shouldn't",
        "mustn't",
        "lacks",
        "unable",
        "false",
    }
)
STOPWORDS = frozenset(
    """
    a an the and or but if then else of to in on at by for with from into onto over under as is are
    was were be been being am do does did doing has have had having it its it's this that these
    those there here which who whom whose what when where why how i me my we our you your he him his
    she her they them their so than too very can could will would shall should may might must also
    just about such only both each any all some more most other another same own up down out off
    again further once s t d ll re ve m o y yes well like one's per via i'm you're he's she's we're
    they're let's
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_FILLER = frozenset(
    {
        "thank",
        "thanks",
        "hope",
        "help",
        "sure",
        "okay",
        "ok",
        "great",
        "hello",
        "hi",
        "welcome",
        "glad",
        "happy",
        "regard",
        "cheer",
        "sorry",
        "please",
        "feel",
        "free",
        "question",
        "let",
        "know",
    }
)
NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "thousand": "1000",
    "million": "1000000",
    "dozen": "12",
}
_NUMBER_WORD = re.compile(rf"\b(?:{'|'.join(NUMBER_WORDS)})\b", re.IGNORECASE)
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "s", "ly")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude suffix stripper: good enough to match 'starred'/'starring' and both sides use it."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: -len(suffix)]
            if suffix in ("ies", "ied"):
                w += "y"
            break
    return w


def words(text: str) -> list[str]:
    """Lower-cased word tokens (numbers included), in order."""
    return _WORD.findall(text.lower().replace("’", "'"))


def content_stems(text: str) -> list[str]:
    """Stems of the words that carry content (stopwords and negations dropped), in order."""
    return [stem(w) for w in words(text) if len(w) > 1 and w not in STOPWORDS and w not in NEGATIONS]


def negation_count(text: str) -> int:
    return sum(1 for w in words(text) if w in NEGATIONS or w.endswith("n't"))


def numbers(text: str) -> list[str]:
    """Numbers in canonical form ('1,000' -> '1000', '5.50' -> '5.5', 'three' -> '3'), in order."""
    found: list[str] = []
    for match in _NUMBER.finditer(text):
        integer, fraction = match.group(1).replace(",", ""), (match.group(2) or "").rstrip("0")
        value = integer.lstrip("0") or "0"
        found.append(f"{value}.{fraction}" if fraction else value)
    found.extend(NUMBER_WORDS[w.lower()] for w in _NUMBER_WORD.findall(text))
    return found


def entities(text: str, *, common: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Capitalised spans (names, places, months, titles), in order and without duplicates.

    A capitalised word at the start of a sentence is only a name when it is not a common word;
    `common` gives the stems of common words (the IDF table's most frequent ones).
    """
    found: dict[str, None] = {}
    for match in _CAPITALISED.finditer(text):
        span = match.group(0).strip(" .,'’-&").removesuffix("'s").removesuffix("’s")
        start = match.start()
        first = span.split()[0].lower() if span else ""
        sentence_start = start == 0 or text[max(0, start - 2) : start].strip() in {".", "!", "?", ":", '"'}
        if sentence_start and (first in STOPWORDS or stem(first) in common or first in NEGATIONS):
            span = " ".join(span.split()[1:])
        if span and span.lower() not in STOPWORDS and span.lower() not in NEGATIONS:
            found[span] = None
    return list(found)


@lru_cache(maxsize=8192)
def sentences(text: str) -> tuple[str, ...]:
    """Sentences of a text (nupunkt's packaged model; newlines also end a sentence)."""
    result: list[str] = []
    for block in text.split("\n"):
        if block.strip():
            found = nupunkt.sent_tokenize(block)  # plain strings (tuples only when asked for spans)
            result.extend(s.strip() for s in found if isinstance(s, str) and s.strip())
    return tuple(result)


def clauses(sentence: str, *, min_words: int = 4) -> list[str]:
    """Split a sentence where it joins independent facts ('; ', ', and ', ', but ', ...).

    A part shorter than `min_words` words stays attached to its neighbour: 'salt, and pepper'
    is one fact, 'Paris is the capital, and Lyon is the third largest city' is two.
    """
    parts = [p.strip(" ,;") for p in _CLAUSE_BREAK.split(sentence) if p and p.strip(" ,;")]
    merged: list[str] = []
    for part in parts:
        if merged and (len(part.split()) < min_words or len(merged[-1].split()) < min_words):
            merged[-1] = f"{merged[-1]}, {part}"
        else:
            merged.append(part)
    return [_as_sentence(p) for p in merged] if len(merged) > 1 else [sentence.strip()]


def _as_sentence(part: str) -> str:
    part = re.sub(r"^(?:and|but|while|whereas|although|though|yet)\s+", "", part.strip(), flags=re.IGNORECASE)
    part = part[:1].upper() + part[1:]
    return part if part.endswith((".", "!", "?")) else f"{part}."


def is_factual(sentence: str) -> bool:
    """False for questions and content-free filler ('Thanks!', 'Hope this helps.')."""
    return not sentence.rstrip().endswith("?") and any(s not in _FILLER for s in content_stems(sentence))


def is_noncommittal(text: str) -> bool:
    """True for evasive answers ('I don't know', 'the context does not say'): ragas zeroes these."""
    return bool(_NONCOMMITTAL.search(text))


@dataclass(frozen=True, slots=True)
class Window:
    """A span of consecutive sentences of one reference, pre-tokenised for matching."""

    node: int
    text: str
    stems: frozenset[str]
    numbers: frozenset[str]
    negations: int
    single: bool  # one sentence (negation is compared sentence to sentence)


@lru_cache(maxsize=4096)
def windows(reference: str, node: int) -> tuple[Window, ...]:
    """Every sentence, then every pair of adjacent sentences (a claim may draw on both); single
    sentences come first so that a tie picks the tighter window (negation is judged on it)."""
    sents = sentences(reference) or (reference,)
    singles = [
        Window(node, s, frozenset(content_stems(s)), frozenset(numbers(s)), negation_count(s), True)
        for s in sents
    ]
    pairs = [
        Window(
            node,
            f"{a.text} {b.text}",
            a.stems | b.stems,
            a.numbers | b.numbers,
            a.negations + b.negations,
            False,
        )
        for a, b in itertools.pairwise(singles)
    ]
    return (*singles, *pairs)
