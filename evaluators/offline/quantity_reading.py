"""Reading numbers, amounts and dates out of text: the parsing half of `quantities`.

Dates are read first (so that '20/07/1969' is not three numbers), then digit numbers with what
follows them (a scale word, a unit, or the noun they count), then English number words
(`number_words`); a span taken by one reader is skipped by the next. Speed shapes the code: every
reader starts from a digit run or a number word found by a cheap scan and looks at the few
characters around it (anchored matches and dictionary lookups), because a regex alternation over
all month names or units, tried at every position of every sentence, costs ten times more. What
depends on one word alone (its month, unit, counted noun) is kept per word; a character below all
CJK ranges, or a look-back without a capital, is not handed to the regex that would reject it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from evaluators.offline.multilingual import CJK, MONTHS, STOPWORDS, ascii_digits, fold, is_latin
from evaluators.offline.units import CURRENCY_BEFORE, CURRENCY_ONLY_SCALES, SCALES, unit_of, words_of

_ENGLISH_MONTHS = frozenset(
    words_of(
        "january february march april may june july august september october november december "
        "jan feb mar apr jun jul aug sep sept oct nov dec"
    )
)
_DIGITS = re.compile(r"\d+")
_ISO = re.compile(r"(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?!\d)")
_NUMERIC = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?!\d)")
_DAY_MONTH = re.compile(
    r"(\d{1,2})(?:st|nd|rd|th|er|\.)?\s*(?:of\s+|de\s+)?([^\W\d_]{3,10})(?![^\W\d_])\.?"
    r"(?:,?\s*(?:de\s+|of\s+)?(\d{4})(?!\d))?",
    re.IGNORECASE,
)
_MONTH_BEFORE = re.compile(r"(?<![^\W\d_])([^\W\d_]{3,10})\.?,?\s+(?:of\s+|de\s+)?\Z", re.IGNORECASE)
_AFTER_MONTH = re.compile(
    r"(\d{1,2})(?:st|nd|rd|th)?(?!\d)(?:,?\s+(\d{4})(?!\d))?|(\d{4})(?!\d)", re.IGNORECASE
)
_CJK_DATE = re.compile(r"(?:(\d{3,4})\s*[年년])?(?:\s*(\d{1,2})\s*[月월](?:\s*(\d{1,2})\s*[日号일])?)?")
_CJK_DATE_MARK = re.compile(r"\s*[年년月월]")
_YEAR_WORD = re.compile(r"(\d{4})\s*(?:гг?\.|года?(?![^\W\d_])|году(?![^\W\d_]))")
_ERA_AFTER = re.compile(
    r"(\d{1,4})\s?(BCE|BC|B\.C\.|π\.\s?Χ\.|до\s+н\.\s?э\.|AD|CE|A\.D\.|μ\.\s?Χ\.|н\.\s?э\.)(?![^\W\d_])"
)
_BEFORE_CHRIST = ("B", "π", "д")  # how the BC eras above begin
_ERA_BEFORE = re.compile(r"(?<![A-Za-z])(?:AD|A\.D\.)\s*\Z")
_NUMBER = re.compile(r"\d+(?:[.,'٫٬]\d+)*")
_SPACE_GROUPS = re.compile(r"(?:[ \u00a0\u202f\u2009]\d{3})+(?!\d)")  # '1 000 000' (not '1969 300')
_CURRENCIES = tuple(sorted(CURRENCY_BEFORE, key=len, reverse=True))
_CURRENCY_ENDS = frozenset(c[-1] for c in _CURRENCIES)
_IS_CJK = re.compile(f"[{CJK}]")
_CJK_FIRST = min(CJK.replace("-", ""))  # the lowest character of any CJK range
_ORDINAL_SUFFIX = re.compile(r"(?:st|nd|rd|th)(?![^\W\d_])", re.IGNORECASE)
# The token after a number: a CJK run, a degree sign, a symbol, or a word (with '/h', '²', a dot).
_TOKEN = re.compile(
    rf"(?:-|[ \u00a0\u202f]?)"
    rf"([{CJK}\uff05]+|°\s?[CcFf]|[%℃℉€£₹₽]|[^\W\d_]+(?:/[^\W\d_]+|[²³]|\^?[23](?!\d))?\.?)"
)
_NOUN_SKIP = STOPWORDS | frozenset(
    words_of(
        "of in on at to for and or the an by with from as is are was were be been than per each more less "
        "over under about into after before since until during some all most other its their his her"
    )
)


class RawDate(NamedTuple):
    start: int
    end: int
    year: int | None
    month: int | None
    day: int | None
    ambiguous: bool = False


@dataclass(slots=True)
class RawNumber:
    """A number being read: mutable so that the words after it can extend it."""

    start: int
    end: int
    amount: float
    currency: str = ""  # ISO code of a currency sign before it ('$5' -> 'USD')
    scale: float = 1.0  # of a scale word after it ('1.5 million' -> 1e6), already applied to `amount`
    unit: int = -1  # index into `units.UNITS`, -1 for none
    ordinal: bool = False
    noun: str = ""


def _is_cjk(text: str) -> bool:
    """Whether `text` begins with a CJK character (compared first: most text is below them all)."""
    return text >= _CJK_FIRST and _IS_CJK.match(text) is not None


@lru_cache(maxsize=4096)
def _month(name: str) -> int | None:
    """The month a word names, or None ('may' and 'march' in lower case are not English months)."""
    folded = fold(name)
    if folded in _ENGLISH_MONTHS and name[0].islower() and name.isascii():
        return None
    return MONTHS.get(folded)


def _date_at(text: str, run: re.Match[str]) -> RawDate | None:
    """The date that a digit run begins or ends, if any (the characters around it pick the readers)."""
    start, end, digits = run.start(), run.end(), len(run.group())
    if start > 1 and text[start - 1] in ",." and text[start - 2].isdigit():
        return None  # inside '1,000,000'
    nxt = text[end : end + 1]
    head = text[max(0, start - 3) : start].rstrip(" ,.")
    if head[-1:].isalpha() and not _is_cjk(head[-1]):  # 'July 20, 1969', 'March 1889', 'AD 1066'
        # (after a month only a day or a year reads: _AFTER_MONTH takes 1, 2 or 4 digits)
        before = _MONTH_BEFORE.search(text, max(0, start - 16), start) if digits in (1, 2, 4) else None
        month = _month(before.group(1)) if before else None
        m = _AFTER_MONTH.match(text, start) if before and month else None
        if before and m:
            year, day = m.group(2) or m.group(3), m.group(1)
            return RawDate(
                before.start(), m.end(), int(year) if year else None, month, int(day) if day else None
            )
        era = _ERA_BEFORE.search(text, max(0, start - 6), start) if digits <= 4 and head[-1] == "D" else None
        if era:  # (its 'AD' or 'A.D.' ends `head`)
            return RawDate(era.start(), end, int(run.group()), None, None)
    if nxt in ("-", "/", "."):
        m = _ISO.match(text, start) if digits == 4 else _NUMERIC.match(text, start) if digits <= 2 else None
        if m and digits == 4:
            return RawDate(start, m.end(), int(m.group(1)), int(m.group(3)), int(m.group(4)))
        if m and (len(m.group(4)) == 4 or m.group(2) == "/"):  # '1.2.10' is a version, not a date
            a, b, y = int(m.group(1)), int(m.group(3)), int(m.group(4))
            y = y if len(m.group(4)) == 4 else (2000 + y if y < 50 else 1900 + y)
            day, month = (b, a) if b > 12 >= a else (a, b)  # day first unless only month first fits
            return RawDate(start, m.end(), y, month, day, a != b and a <= 12 and b <= 12)
    if digits <= 2 and (nxt.isalpha() or nxt in (" ", ".", "\u00a0")):
        m = _DAY_MONTH.match(text, start)  # '20 July 1969', '20. Juli', '20 de julio de 1969', '12 апреля'
        month = _month(m.group(2)) if m else None
        if m and month:
            return RawDate(start, m.end(), int(m.group(3)) if m.group(3) else None, month, int(m.group(1)))
    if _CJK_DATE_MARK.match(text, end):  # '1969年7月20日', '7月20日'
        m = _CJK_DATE.match(text, start)
        if m and (m.group(1) or m.group(2)):
            year, month, day = (int(g) if g else None for g in m.groups())
            if year and text[max(0, start - 2) : start].rstrip().endswith("前"):  # '公元前221年': BC
                year = -year
            return RawDate(start, m.end(), year, month, day)
    if digits <= 4 and (nxt == " " or nxt.isalpha()):
        m = _YEAR_WORD.match(text, start) or _ERA_AFTER.match(text, start)
        if m:  # '1961 года', '1950 г.', '753 BC', '1066 AD'
            bc = m.re is _ERA_AFTER and m.group(2).startswith(_BEFORE_CHRIST)
            return RawDate(start, m.end(), -int(m.group(1)) if bc else int(m.group(1)), None, None)
    return None


class RawClock(NamedTuple):
    start: int
    end: int
    minutes: int  # since midnight
    hour: int  # as written ('9' of '9pm'), so that a bare '9' still matches it


# '9am', '9 a.m.', '9:30 PM', '10.30pm' (a dot only before am/pm: '10.30' is a number), '18:00'.
_CLOCK = re.compile(
    r"(?<![\w:.,])(\d{1,2})(?:([:.])(\d{2}))?\s?([ap])(?:\.m\.?|m(?![^\W\d_]))"
    r"|(?<![\w:.,])(\d{1,2}):(\d{2})(?![\d:]|[.,]\d)",
    re.IGNORECASE,
)
_CLOCK_HINT = re.compile(r"\d(?::\d|\s?[aApP]\.?[mM])")  # what every clock time holds


def read_clock_times(text: str, taken: Sequence[tuple[int, int]]) -> list[RawClock]:
    """Times of day outside `taken`: 12-hour with am/pm (12am is midnight, 12pm noon), or 24-hour."""
    found: list[RawClock] = []
    if not _CLOCK_HINT.search(text):  # most texts hold no time: one cheap scan instead of the full one
        return found
    for m in _CLOCK.finditer(text):
        if taken and overlaps(m.start(), m.end(), taken):
            continue
        if m.group(1) is not None:  # 12-hour
            hour, minute = int(m.group(1)), int(m.group(3) or 0)
            if not 1 <= hour <= 12 or minute > 59:
                continue
            minutes = (hour % 12 + (12 if m.group(4).lower() == "p" else 0)) * 60 + minute
        else:
            hour, minute = int(m.group(5)), int(m.group(6))
            if hour > 24 or minute > 59 or (hour == 24 and minute):
                continue
            minutes = hour % 24 * 60 + minute
        found.append(RawClock(m.start(), m.end(), minutes, hour))
    return found


def read_dates(text: str) -> list[RawDate]:
    found: list[RawDate] = []
    for run in _DIGITS.finditer(text):
        if found and run.start() < found[-1].end:
            continue
        date = _date_at(text, run)
        if (
            date
            and (date.month is None or 1 <= date.month <= 12)
            and (date.day is None or 1 <= date.day <= 31)
        ):
            found.append(date)
    return found


def parse_digits(token: str) -> float | None:
    """'1,234.5', '1.234,5', '1 000', "1'000", '3,5' -> floats; '2.3.1' (a version) -> None. One
    separator before exactly three digits is a thousands separator if it is ',' ('1,500') and a
    decimal point if it is '.' ('1.500' = 1.5): the English reading wins where both are possible."""
    if token.isascii() and token.isdigit():  # most numbers: nothing to convert or split
        return float(token)
    t = "".join(ascii_digits(token).replace("'", "").split())
    if t.isdigit():
        return float(t)
    seps = [c for c in t if c in ".,"]
    groups = re.split(r"[.,]", t)
    grouped = len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:-1])
    if len(set(seps)) == 2:
        decimal = seps[-1]
        if seps.count(decimal) != 1 or not grouped:
            return None
        return float(t.replace("," if decimal == "." else ".", "").replace(decimal, "."))
    if len(seps) == 1:
        if seps[0] == "," and len(groups[1]) == 3 and len(groups[0]) <= 3:
            return float(t.replace(",", ""))
        return float(t.replace(",", "."))
    return float(t.replace(seps[0], "")) if grouped and len(groups[-1]) == 3 else None


@lru_cache(maxsize=4096)
def noun_key(word: str) -> str:
    """What a number counts, folded so that '3 moons' and '4 moons' (or '3 спутника' and '5 спутников',
    by a 5-letter prefix; '3颗卫星' and '5颗卫星' by two characters) name the same thing; '' for a
    function word."""
    if _is_cjk(word):
        return word[:2]
    w = (word.lower() if word.isascii() else fold(word)).removesuffix(".")
    if w in _NOUN_SKIP or len(w) < 3:
        return ""
    if not is_latin(w):
        return w[:5]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w


_NAME_BEFORE = re.compile(r"(?<![\w.])([A-Z][\w+#]*)\s+$")  # 'Python 3.12', 'PEP 701'


def read_after(text: str, raw: RawNumber) -> None:
    """The scale word, unit or counted noun after a number; extends `raw.end` over what it reads.
    A bare number with none takes the name right before it: 'Python 3.12' and 'Python 3.13' are
    two versions of one thing, so they conflict as '3 moons' and '4 moons' do."""
    token = _TOKEN.match(text, raw.end)
    if token:
        word = token.group(1)
        scale = SCALES.get(word.casefold().removesuffix(".") if len(word) > 1 else word)
        cjk_scale = SCALES.get(word[0]) if _is_cjk(word) else None
        if (scale or cjk_scale) and (raw.currency or word.casefold() not in CURRENCY_ONLY_SCALES):
            raw.scale = scale or cjk_scale or 1.0
            raw.amount *= raw.scale
            dot = word.endswith(".") and word.casefold() not in SCALES  # 'billion.' ends a sentence
            raw.end = token.start(1) + (1 if cjk_scale and not scale else len(word) - dot)
            token = _TOKEN.match(text, raw.end)
    if token is not None:
        word, start = token.group(1), token.start(1)
        found = unit_of(word, text, start) if not raw.ordinal else None
        if found and not (word == "s" and start == raw.end and text[raw.end - 1] == "0"):  # '1990s': a decade
            raw.unit, raw.end = found
        elif not raw.currency and (start > raw.end or _is_cjk(word)):
            raw.noun = noun_key(word)
    if not raw.noun and raw.unit < 0 and not raw.currency:
        lookback = max(0, raw.start - 40)
        named = (
            None if text[lookback : raw.start].islower() else _NAME_BEFORE.search(text, lookback, raw.start)
        )
        raw.noun = noun_key(named.group(1)) if named else ""


def _prefix(text: str, start: int) -> tuple[int, str, str]:
    """(where the quantity begins, currency code, sign) for a number at `start`: '$5', 'US$ 5', '-5'."""
    begin, sign, currency = start, "", ""
    if start and text[start - 1] in "-+−":
        begin, sign = start - 1, text[start - 1]
    at = begin - 1 if begin and text[begin - 1] in " \u00a0" else begin
    if text[at - 1 : at] in _CURRENCY_ENDS and text.endswith(_CURRENCIES, max(0, at - 3), at):
        symbol = next(c for c in _CURRENCIES if text.endswith(c, max(0, at - 3), at))
        begin, currency = at - len(symbol), CURRENCY_BEFORE[symbol]
    if sign and not currency and text[begin - 1 : begin].isalnum():
        begin, sign = start, ""  # '5-10', 'COVID-19': a range or a name, not a negative number
    return begin, currency, sign


def read_numbers(text: str, taken: Sequence[tuple[int, int]]) -> list[RawNumber]:
    """Digit numbers (any script) outside `taken`, with currency, sign, ordinal suffix, scale, unit."""
    found: list[RawNumber] = []
    pos = 0
    while match := _NUMBER.search(text, pos):
        start, end = match.span()
        groups = _SPACE_GROUPS.match(text, end) if end - start <= 3 and match.group().isdigit() else None
        end = pos = groups.end() if groups else end
        if taken and overlaps(start, end, taken):
            continue
        begin, currency, sign = _prefix(text, start)
        prev = text[begin - 1 : begin]
        if (prev.isalnum() and not _is_cjk(prev)) or prev in ("_", ".", ":"):
            continue  # 'A380', 'v2', '10:30'
        if text[end : end + 1] == ":" or text[end : end + 2] in ("'s", "’s"):
            continue
        amount = parse_digits(text[start:end])
        if amount is None:
            continue
        raw = RawNumber(begin, end, -amount if sign in ("-", "−") else amount, currency)
        suffix = _ORDINAL_SUFFIX.match(text, end)
        if suffix and amount.is_integer():
            raw.ordinal, raw.end = True, suffix.end()
        read_after(text, raw)
        nxt = text[raw.end : raw.end + 1]
        if raw.unit < 0 and raw.scale == 1.0 and nxt.isalpha() and not _is_cjk(nxt):
            continue  # '3D', '5G', '1990s': an identifier or a decade, not a quantity
        found.append(raw)
    return found


def overlaps(start: int, end: int, taken: Sequence[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in taken)
