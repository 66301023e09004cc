"""Word tokens of text in any script, for `text.py`: letters and marks of every script, CJK as bigrams.

Python's `re` has no `\\p{L}`, so the letter and mark classes are built from `unicodedata` the first
time they are needed (~30 ms); why Han, kana and Hangul become character bigrams is in
`multilingual`'s docstring, with the folding that comes before.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from evaluators.offline import multilingual as ml

_CJK_PART = re.compile(f"(?P<han>[{ml.HAN}]+)|(?P<kata>[{ml.KATAKANA}]+)|(?P<hangul>[{ml.HANGUL}]+)")
_HAN_BREAKS = re.compile("[的了是在和与及吗呢吧啊也而]")  # particles: a bigram across one is noise
_OTHER_DIGIT = re.compile(r"[^\x00-\x7f](?<=\d)")
_HAS_CJK = re.compile(f"[{ml.CJK_BMP}]")


def cjk_tokens(run: str) -> list[str]:
    """Tokens of a run of Han/kana/Hangul characters (see the module docstring for why bigrams)."""
    found: list[str] = []
    for match in _CJK_PART.finditer(_HAN_BREAKS.sub(" ", run)):
        part = match.group()
        if match.lastgroup == "kata" or len(part) == 1:
            found.append(part)
        else:
            found.extend(part[i : i + 2] for i in range(len(part) - 1))
    return found


def unicode_words(folded: str) -> list[str]:
    """Word tokens of folded non-ASCII text (from `token_text`), in order, digits as ASCII."""
    plain, with_cjk = _token_patterns()
    if not _HAS_CJK.search(folded):
        found = plain.findall(folded)
        return [ml.ascii_digits(t) for t in found] if _OTHER_DIGIT.search(folded) else found
    tokens: list[str] = []
    for match in with_cjk.finditer(folded):
        if match.lastgroup == "cjk":
            tokens.extend(cjk_tokens(match.group()))
        else:
            tokens.append(ml.ascii_digits(match.group()))
    return tokens


def _ranges(codepoints: list[int]) -> str:
    """A regex character-class body for sorted code points, as ranges of \\U escapes."""
    parts: list[str] = []
    start = prev = codepoints[0]
    for cp in [*codepoints[1:], -1]:
        if cp != prev + 1:
            parts.append(f"\\U{start:08x}" if start == prev else f"\\U{start:08x}-\\U{prev:08x}")
            start = cp
        prev = cp
    return "".join(parts)


@cache
def _token_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Words (letters of any script but CJK, with their marks and apostrophes) and numbers; the same
    plus CJK runs. Only the BMP is scanned: beyond it a class becomes a slow list of ranges."""
    letters: list[int] = []
    marks: list[int] = []
    cp = 0
    while cp < 0x10000:
        for lo, hi in ((0x3400, 0xA000), (0xAC00, 0xD7B0), (0xD800, 0xFB00)):  # CJK, surrogates, private
            if lo <= cp < hi:
                cp = hi
        category = unicodedata.category(chr(cp))
        if category[0] == "L" and not (0x3005 <= cp <= 0x3007 or 0x3040 <= cp <= 0x31FF):
            letters.append(cp)
        elif category[0] == "M":
            marks.append(cp)
        cp += 1
    letter, mark = _ranges(letters), _ranges(marks)
    word = f"[{letter}][{letter}{mark}']*(?:-(?=\\d)[{letter}{mark}\\d]+(?:-[{letter}{mark}\\d]+)*)?"
    number = r"\d+(?:[.,:]\d+)*(?:st|nd|rd|th)?%?"
    return re.compile(f"{word}|{number}"), re.compile(
        f"(?P<word>{word})|(?P<num>{number})|(?P<cjk>[{ml.CJK}]+)"
    )


@cache
def upper_class() -> str:
    """Capital letters of the Latin, Greek and Cyrillic scripts, as a character-class body."""
    scan = [*range(0x41, 0x5B), *range(0xC0, 0x530), *range(0x1E00, 0x2000)]
    return _ranges([cp for cp in scan if unicodedata.category(chr(cp)) in ("Lu", "Lt")])
