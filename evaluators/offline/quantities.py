"""Numbers, amounts and dates in text, and whether a claim's quantity is supported or contradicted.

Canonical number strings cannot see that '2 years' is '24 months', that 'July 20, 1969' is
'20/07/1969' or that 'twenty-four' is '24'; `Quantity` values can. Each has a kind:

- 'number': a bare count or value ('7 million visitors', 'the third largest'). `noun` keeps what it
  counts (folded, plural stripped), because two numbers contradict each other only when they count
  the same thing ('3 moons' vs '4 moons'; '3 moons' vs '4 rings' is no contradiction);
- 'date': `year`, `month`, `day`, any of them None ('March 1889', '20 July'). A numeric date whose
  day and month could be swapped (03/04/2020) reads day first and is `ambiguous`: both readings are
  accepted when matching, and it contradicts another date only when both readings do;
- a dimension, with `value` in its base unit (see `units.py`): 'length', 'area', 'volume', 'mass',
  'duration', 'speed', 'data_size', 'data_rate', 'temperature' (°C), 'percent', 'money:<ISO code>';
- 'clock': a time of day, `value` in minutes since midnight ('9am' = '09:00', '6 p.m.' = '18:00');
  its `amount` is the hour as written, so a bare '9' matches '9am'.

A bare year stays a 'number' ('in 1889' reads like '1889 people'), but a bare 4-digit one is
`year_like`, and then it matches and contradicts dates by their year. Spelled-out numbers are read in
English only; digits in any script.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from evaluators.offline.number_words import read_spelled
from evaluators.offline.quantity_reading import RawNumber, read_clock_times, read_dates, read_numbers
from evaluators.offline.units import UNITS

_DIGIT = re.compile(r"\d")
# A number beyond this is no quantity to compare: read as a float it may be infinite, and an infinite
# value would be 'the same' as any finite one (its difference is within an infinite tolerance).
_READABLE = 1e100
_EXACT = 1e-9  # relative tolerance for numbers written in the same unit: they must be equal
_ROUNDING = 0.015  # across units ('1 mile' vs '1.6 km', '5 km' vs '3.1 miles') rounding is allowed,
_CLEARLY = 0.03  # and only a gap beyond this is a contradiction ('4 weeks' vs '1 month' is 8 %)
_DEGREES_ROUNDING, _DEGREES_CLEARLY = 0.6, 1.5  # temperatures compare in °C, absolutely


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number, amount or date found in a text, with the span it was read from."""

    kind: str
    value: float | None = None  # in the kind's base unit (for 'number', the number); None for dates
    unit: str = ""  # canonical unit as written ('km', 'month', 'USD'); '' for numbers and dates
    amount: float | None = None  # the number as written, scale words applied ('1.5 million km' -> 1.5e6)
    year: int | None = None
    month: int | None = None
    day: int | None = None
    ambiguous: bool = False  # a numeric date that also reads month first
    ordinal: bool = False
    noun: str = ""
    span: tuple[int, int] = (0, 0)
    text: str = ""

    @property
    def year_like(self) -> bool:
        """A bare 4-digit integer that may be a year ('1889'; not '1,889', '1889th' or 'two thousand')."""
        v = self.value
        return (
            self.kind == "number"
            and not self.ordinal
            and v is not None
            and 1000 <= v <= 2100
            and self.text.isdigit()
        )


# '7-year-old', '7 years old': an age, which a duration neither states nor contradicts ('for nine weeks').
_OLD = re.compile(r"[-\s]old\b", re.IGNORECASE)


def _from_raw(text: str, raw: RawNumber) -> Quantity:
    span, written = (raw.start, raw.end), text[raw.start : raw.end]
    if raw.unit >= 0:
        unit = UNITS[raw.unit]
        value = raw.amount * unit.factor + unit.offset
        kind = "age" if unit.kind == "duration" and _OLD.match(text, raw.end) else unit.kind
        return Quantity(kind, value, unit.symbol, raw.amount, span=span, text=written)
    if raw.currency:
        return Quantity(
            f"money:{raw.currency}", raw.amount, raw.currency, raw.amount, span=span, text=written
        )
    return Quantity(
        "number", raw.amount, "", raw.amount, ordinal=raw.ordinal, noun=raw.noun, span=span, text=written
    )


_RANGE_WORDS = frozenset(("-", "–", "—", "~", "to", "and", "or", "до", "bis", "à", "a", "al", "y"))


def _share_units(text: str, raws: list[RawNumber]) -> None:
    """A range states its unit and scale once: '3-4 days', '$3-4 million', 'between 5 and 10 km'."""
    for first, second in itertools.pairwise(raws):
        if text[first.end : second.start].strip().lower() not in _RANGE_WORDS:
            continue
        if (
            first.unit >= 0
            or first.noun
            or first.ordinal
            or (text[first.start : first.end].isdigit() and (1000 <= first.amount <= 2100))
        ):
            continue  # it has its own unit, counts something, or is a year ('in 1969 and 3 days')
        if first.scale == 1.0 and second.scale != 1.0:
            first.amount, first.scale = first.amount * second.scale, second.scale
        first.unit, first.currency = second.unit, first.currency or second.currency
        if second.unit < 0:
            second.currency = second.currency or first.currency


@lru_cache(maxsize=4096)
def quantities(text: str) -> tuple[Quantity, ...]:
    """Numbers, amounts and dates of a text, in order of appearance."""
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    raws: list[RawNumber] = []
    if _DIGIT.search(text):
        for d in read_dates(text):
            taken.append((d.start, d.end))
            found.append(
                Quantity("date", year=d.year, month=d.month, day=d.day, ambiguous=d.ambiguous,
                         span=(d.start, d.end), text=text[d.start : d.end])
            )  # fmt: skip
        for c in read_clock_times(text, taken):
            taken.append((c.start, c.end))
            found.append(
                Quantity(
                    "clock", c.minutes, "clock", c.hour, span=(c.start, c.end), text=text[c.start : c.end]
                )
            )
        raws = read_numbers(text, taken)
        taken += [(r.start, r.end) for r in raws]
    spelled = read_spelled(text, taken)
    if spelled:  # digit numbers come in order: number words (and dates, below) are sorted in
        raws = sorted([*raws, *spelled], key=lambda r: r.start)
    _share_units(text, raws)
    raws = [r for r in raws if abs(r.amount) < _READABLE]  # a 400-digit number reads as infinity
    if not found:  # no date
        return tuple([_from_raw(text, r) for r in raws])
    found += [_from_raw(text, r) for r in raws]
    return tuple(sorted(found, key=lambda q: q.span))


_DAY_BEFORE_STOP = re.compile(r"(?<!\d)\d{1,2}\.\Z")  # '... was 20.' + 'July ...' reads '20. July'
_JOINING_WORDS = frozenset(("of", "de"))  # 'in March.' + 'of 1889 ...' reads 'March. of 1889'


def reads_apart(first: str, second: str) -> bool:
    """True when f"{first} {second}" provably reads as the quantities of `first` followed by those of
    `second` (the same values; spans shifted), so that a pair window's or a passage's quantities are
    its sentences'. The readers look past a number by one token, which a '.', '!' or '?' ending
    `first` stops ('20.' before 'July' excepted); and before a number by one token (a month, 'A.D.',
    'Rs.', a name), or two when the nearer one is 'of' or 'de': so the number must not be the first
    token of `second`, nor follow an 'of' or 'de' that begins it."""
    if (
        first[-1:] not in (".", "!", "?")
        or not second[:1].isalpha()
        or _DAY_BEFORE_STOP.search(first, max(0, len(first) - 3))  # (a match ends `first`)
    ):
        return False
    head = second.split(maxsplit=1)[0]
    return _DIGIT.search(head) is None and head.lower() not in _JOINING_WORDS


def _same(a: float | None, b: float | None) -> bool:
    """|a - b| <= _EXACT * max(|a|, |b|, 1), spelled out (no call to max: this runs per pair)."""
    if a is None or b is None:
        return False
    difference, x, y = abs(a - b), abs(a), abs(b)
    larger = x if x > y else y  # where max() would differ (a NaN), the difference is NaN too
    return difference <= _EXACT * (larger if larger > 1.0 else 1.0)


def _gap(ref: Quantity, claim: Quantity) -> tuple[float, float, float]:
    """(difference, rounding tolerance, contradiction threshold) of two quantities of one dimension."""
    a, b = ref.value or 0.0, claim.value or 0.0
    if ref.unit == claim.unit:
        return abs(a - b), _EXACT * max(abs(a), abs(b), 1.0), _EXACT * max(abs(a), abs(b), 1.0)
    if ref.kind == "temperature":
        return abs(a - b), _DEGREES_ROUNDING, _DEGREES_CLEARLY
    scale = max(abs(a), abs(b), 1e-12)
    return abs(a - b), _ROUNDING * scale, _CLEARLY * scale


def _readings(q: Quantity) -> tuple[tuple[int | None, int | None, int | None], ...]:
    ymd = (q.year, q.month, q.day)
    return (ymd, (q.year, q.day, q.month)) if q.ambiguous else (ymd,)


def _date_supports(ref: Quantity, claim: Quantity) -> bool:
    if claim.kind == "date" and ref.kind == "date":
        return any(
            all(c is None or c == r for r, c in zip(ref_ymd, claim_ymd, strict=True))
            for ref_ymd in _readings(ref)
            for claim_ymd in _readings(claim)
        )
    if claim.kind == "date":  # '1889年' against a bare '1889'
        return claim.month is None and claim.day is None and ref.year_like and _same(ref.value, claim.year)
    if claim.kind != "number" or claim.value is None or not claim.value.is_integer():
        return False
    whole = int(claim.value)  # '1889' against 'March 1889'; 'the 20th' against 'July 20'
    return whole == ref.year or (claim.ordinal and any(whole == ymd[2] for ymd in _readings(ref)))


def supports(ref: Quantity, claim: Quantity) -> bool:
    """True when `ref` (from a passage) states `claim`'s quantity: same kind and value (rounding
    allowed across units), or a date at least as specific that agrees on every field the claim gives.
    A bare number matches any quantity with that number ('30' vs '30 days', '1889' vs 'March 1889')."""
    if claim.kind == "date" or ref.kind == "date":
        return _date_supports(ref, claim)
    if claim.kind == "number":  # (a number's or an amount of money's value is its amount)
        amount = ref.amount
        return _same(amount, claim.value) or (ref.value != amount and _same(ref.value, claim.value))
    if ref.kind == "number":
        return _same(ref.value, claim.amount)
    if ref.kind != claim.kind:
        return False
    difference, rounding, _ = _gap(ref, claim)
    return difference <= rounding


def conflicts(ref: Quantity, claim: Quantity) -> bool:
    """True when `ref` states another value for the same thing as `claim`: the same dimension and a
    clear gap ('300 metres' vs '330 metres'), dates that disagree on a field both give ('20 July' vs
    '21 July'; '1925' vs 'March 1889'), two years ('1925' vs '1889'), or two numbers of the same
    noun ('3 moons' vs '4 moons'). A bare number and an amount never conflict: their units differ."""
    if claim.kind == "date" or ref.kind == "date":
        if claim.kind == ref.kind:
            return all(
                any(
                    r is not None and c is not None and r != c
                    for r, c in zip(ref_ymd, claim_ymd, strict=True)
                )
                for ref_ymd in _readings(ref)
                for claim_ymd in _readings(claim)
            )
        date, other = (ref, claim) if ref.kind == "date" else (claim, ref)
        return other.year_like and date.year is not None and not _same(other.value, date.year)
    if ref.kind == claim.kind == "number":
        if ref.year_like and claim.year_like:
            return not _same(ref.value, claim.value)
        same_thing = bool(ref.noun) and ref.noun == claim.noun and ref.ordinal == claim.ordinal
        return same_thing and not _same(ref.value, claim.value)
    if ref.kind != claim.kind:
        return False
    difference, _, clearly = _gap(ref, claim)
    return difference > clearly


def claim_quantities_found(
    claim: Iterable[Quantity], refs: Iterable[Quantity], window: Iterable[Quantity] | None = None
) -> tuple[list[Quantity], list[Quantity]]:
    """(missing, contradicted): the claim's quantities that no quantity of `refs` supports, and those of
    them that a quantity of `window` (the best-matching passage; `refs` when not given) contradicts."""
    pool = tuple(refs)
    near = pool if window is None else tuple(window)
    missing = [q for q in claim if not any(supports(r, q) for r in pool)]
    return missing, [q for q in missing if any(conflicts(r, q) for r in near)]
