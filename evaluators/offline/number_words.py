"""English number words: 'twenty-four', 'two hundred and fifty', 'a dozen', 'one and a half million',
'the third'. Read by a small state machine over the words of each run that a trie-shaped regex finds
(on lower-cased text: a case-insensitive alternation scans three times slower).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from evaluators.offline.quantity_reading import RawNumber, overlaps, read_after
from evaluators.offline.units import words_of

CARDINALS = {
    w: v
    for v, w in enumerate(
        words_of(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
            "sixteen seventeen eighteen nineteen"
        )
    )
}
TENS = {w: 10 * i for i, w in enumerate(words_of("twenty thirty forty fifty sixty seventy eighty ninety"), 2)}
BIG = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_FIRST_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth"
)
ORDINALS: dict[str, int] = {
    **{w: v for v, w in enumerate(words_of(_FIRST_ORDINALS), start=1)},
    **{w.removesuffix("y") + "ieth": v for w, v in TENS.items()},
    "hundredth": 100,
    "thousandth": 1000,
    "millionth": 10**6,
}
NUMBER_WORD_NAMES = (*CARDINALS, *TENS, *BIG, *ORDINALS, "dozen", "half")


def _trie(words: Iterable[str]) -> str:
    """A regex matching exactly `words`, shaped as a trie so that a mismatch fails on its first letter."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + render(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 and "" not in node else f"(?:{'|'.join(branches)})"
        return f"{body}?" if "" in node else body

    return render(tree)


_AN = re.compile(r"\s+an?(?=\s)", re.IGNORECASE)
_WORD_NUMBER = _trie(NUMBER_WORD_NAMES)
_SPELLED_PATTERN = (
    rf"\b(?:an?\s+(?=(?:hundred|thousand|million|billion|trillion|dozen|half)\b))?{_WORD_NUMBER}"
    rf"(?:[\s-]+(?:and\s+|an?\s+)?{_WORD_NUMBER})*\b"
)
_SPELLED = re.compile(_SPELLED_PATTERN)  # on lower-cased text: IGNORECASE makes the scan 3x slower
_SPELLED_ANY_CASE = re.compile(_SPELLED_PATTERN, re.IGNORECASE)  # when lower-casing moves characters
_LETTERS = re.compile(r"[A-Za-z]+")
_AFTER_A = frozenset((*BIG, "dozen", "half"))


def _one_spelled(tokens: Sequence[str], i: int) -> tuple[float, int, bool]:
    """The number spelled from `tokens[i]` on: (value, end token, ordinal); end == i when none."""
    total, current, last, j, n = 0.0, 0.0, "", i, len(tokens)
    while j < n:
        t, nxt, step = tokens[j], tokens[j + 1] if j + 1 < n else "", 1
        small = CARDINALS.get(t, ORDINALS.get(t, 100))
        tens = TENS.get(t, ORDINALS.get(t, 0))
        if t in ("a", "an"):
            if last not in ("", "half") or nxt not in _AFTER_A:
                break
            current, last = (current if last or nxt == "half" else 1.0), last or "a"
        elif (
            t == "and" and last in ("hundred", "big") and (nxt in CARDINALS or nxt in TENS or nxt in ORDINALS)
        ):
            pass
        elif (
            t == "and"
            and last in ("unit", "tens", "hundred", "big")
            and tokens[j + 1 : j + 3] == ["a", "half"]
        ):
            current, last, step = current + 0.5, "half", 3
        elif t == "half" and last in ("", "a"):
            current, last = 0.5, "half"
        elif small < 20 and (last in ("", "hundred", "big") or (last == "tens" and 0 < small < 10)):
            current, last = current + small, "unit"
        elif 20 <= tens < 100 and last in ("", "hundred", "big"):
            current, last = current + tens, "tens"
        elif t in ("hundred", "hundredth", "dozen") and last in ("", "a", "unit", "tens"):
            current, last = (current or 1.0) * (12 if t == "dozen" else 100), "hundred"
        elif (t in BIG or t in ("thousandth", "millionth")) and last in (
            "",
            "a",
            "unit",
            "tens",
            "hundred",
            "half",
        ):
            total, current, last = total + (current or 1.0) * BIG.get(t, ORDINALS.get(t, 1)), 0.0, "big"
        else:
            break
        j += step
        if t in ORDINALS:
            return total + current, j, True
    return total + current, j, False


# 'one' after these is a pronoun, no number: 'Jamie Foxx starred in that one', 'the one that won'.
_POINTS_AT = re.compile(r"\b(?:this|that|the|which|each|every|any|another)\s+\Z", re.IGNORECASE)


def _spelled_segments(text: str) -> Iterator[tuple[int, int, float, bool, bool]]:
    """(start, end, value, ordinal, a bare 'half') of each run of English number words."""
    lowered = text.lower()
    same = len(lowered) == len(text)
    for match in (_SPELLED if same else _SPELLED_ANY_CASE).finditer(lowered if same else text):
        spans = [
            (m.start() + match.start(), m.end() + match.start()) for m in _LETTERS.finditer(match.group())
        ]
        tokens = [text[s:e].lower() for s, e in spans]
        i = 0
        while i < len(tokens):
            value, j, ordinal = _one_spelled(tokens, i)
            if j == i:
                i += 1
                continue
            if tokens[i:j] != ["one"] or not _POINTS_AT.search(text, max(0, spans[i][0] - 12), spans[i][0]):
                yield spans[i][0], spans[j - 1][1], value, ordinal, tokens[i:j] in (["half"], ["a", "half"])
            i = j


def spelled_numbers(text: str) -> list[tuple[float, bool]]:
    """(value, ordinal) of each number spelled out in words ('twenty-four', 'a dozen'), 'half' aside."""
    return [(value, ordinal) for _, _, value, ordinal, half in _spelled_segments(text) if not half]


def read_spelled(text: str, taken: list[tuple[int, int]]) -> list[RawNumber]:
    """English number words outside `taken`: 'twenty-four hours', 'two hundred and fifty', 'a dozen',
    'three thousand', 'one and a half million', 'half an hour', 'the third'. Adds what it reads to `taken`."""
    found: list[RawNumber] = []
    for start, end, value, ordinal, half in _spelled_segments(text):
        if overlaps(start, end, taken):
            continue
        raw = RawNumber(start, end, value, ordinal=ordinal)
        if half:
            an = _AN.match(text, raw.end)
            raw.end = an.end() if an else raw.end
        read_after(text, raw)
        if half and raw.unit < 0 and raw.scale == 1.0:
            continue  # 'half' alone is not a quantity ('the first half')
        found.append(raw)
        taken.append((raw.start, raw.end))
    return found
