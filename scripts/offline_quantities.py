"""Numbers, dates and units in English text: the patterns the synthetic set rewrites (training only).

Both sides of the synthetic set need them: a paraphrase writes the same quantity another way
('2 years' -> '24 months', 'July 20, 1969' -> '1969-07-20'), a perturbation writes another one
('2 years' -> '2 months'). Only exact conversions are listed, so a paraphrase stays true.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Change = tuple[str, str] | None  # (new text, what changed), or None: the rewrite does not apply

MONTHS = (
    "January February March April May June July August September October November December".split()  # noqa: SIM905
)
_MONTH = "|".join(MONTHS)
DATE = re.compile(
    rf"\b(?:(?P<m1>{_MONTH})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>1\d{{3}}|20\d\d)"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m2>{_MONTH}),?\s+(?P<y2>1\d{{3}}|20\d\d)"
    rf"|(?P<y3>1\d{{3}}|20\d\d)-(?P<n3>[01]\d)-(?P<d3>[0-3]\d)"
    rf"|(?P<m4>{_MONTH})\s+(?P<d4>\d{{1,2}})(?:st|nd|rd|th)?"
    rf"|(?P<d5>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m5>{_MONTH}))\b"
)
YEAR = re.compile(r"(?<![\w$£€.,:/-])(1[5-9]\d\d|20[0-4]\d)(?![\w%]|[.,:/-]\d)")
WEEKDAY = re.compile(r"\b(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b")
_SMALL = """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen
""".split()  # noqa: SIM905 (a word list reads better as text)
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
WORD_VALUES = {w: i for i, w in enumerate(_SMALL)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_WORD_NUM = rf"(?:(?:{'|'.join(_TENS)})(?:-(?:{'|'.join(_SMALL[1:10])}))?|{'|'.join(_SMALL[2:])})"
WORD_NUMBER = re.compile(rf"\b{_WORD_NUM}\b", re.IGNORECASE)
NUMBER = re.compile(
    r"(?<![\w$£€.,:/'’-])(?P<cur>[$£€])?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<dec>\.\d+)?(?P<suf>%|st|nd|rd|th)?"
    r"(?P<scale>\s(?:million|billion|trillion))?(?![\w]|[.,:/-]\d)"
)


@dataclass(frozen=True, slots=True)
class Unit:
    name: str  # singular, British spelling
    plural: str
    dim: str
    factor: float  # in the dimension's base unit
    forms: tuple[str, ...] = ()  # other spellings and abbreviations


UNITS = (
    Unit("millimetre", "millimetres", "length", 0.001, ("millimeter", "millimeters", "mm")),
    Unit("centimetre", "centimetres", "length", 0.01, ("centimeter", "centimeters", "cm")),
    Unit("metre", "metres", "length", 1, ("meter", "meters")),
    Unit("kilometre", "kilometres", "length", 1000, ("kilometer", "kilometers", "km")),
    Unit("inch", "inches", "length", 0.0254),
    Unit("foot", "feet", "length", 0.3048, ("ft",)),
    Unit("yard", "yards", "length", 0.9144),
    Unit("mile", "miles", "length", 1609.344),
    Unit("milligram", "milligrams", "mass", 0.001, ("mg",)),
    Unit("gram", "grams", "mass", 1),
    Unit("kilogram", "kilograms", "mass", 1000, ("kg", "kilo", "kilos")),
    Unit("tonne", "tonnes", "mass", 1e6),
    Unit("ton", "tons", "mass", 907185),
    Unit("ounce", "ounces", "mass", 28.35, ("oz",)),
    Unit("second", "seconds", "time", 1),
    Unit("minute", "minutes", "time", 60, ("mins",)),
    Unit("hour", "hours", "time", 3600, ("hrs",)),
    Unit("day", "days", "time", 86400),
    Unit("week", "weeks", "time", 604800),
    Unit("month", "months", "time", 2629800),
    Unit("year", "years", "time", 31557600),
    Unit("decade", "decades", "time", 315576000),
    Unit("century", "centuries", "time", 3155760000),
    Unit("millilitre", "millilitres", "volume", 0.001, ("milliliter", "milliliters", "ml")),
    Unit("litre", "litres", "volume", 1, ("liter", "liters")),
    Unit("gallon", "gallons", "volume", 3.785),
    Unit("acre", "acres", "area", 4046.86),
    Unit("hectare", "hectares", "area", 10000),
    Unit("square mile", "square miles", "area", 2589988),
    Unit("square kilometre", "square kilometres", "area", 1e6, ("square kilometer", "square kilometers")),
    Unit("mile per hour", "miles per hour", "speed", 0.447, ("mph",)),
    Unit("kilometre per hour", "kilometres per hour", "speed", 0.2778, ("km/h", "kph")),
    Unit("kilobyte", "kilobytes", "data", 1e3, ("KB",)),
    Unit("megabyte", "megabytes", "data", 1e6, ("MB",)),
    Unit("gigabyte", "gigabytes", "data", 1e9, ("GB",)),
    Unit("terabyte", "terabytes", "data", 1e12, ("TB",)),
)
UNIT_OF = {form: u for u in UNITS for form in (u.name, u.plural, *u.forms)}
# Exact conversions only (a paraphrase must stay true): (larger unit, smaller unit, factor).
EXACT = (
    ("kilometre", "metre", 1000), ("metre", "centimetre", 100), ("centimetre", "millimetre", 10),
    ("kilogram", "gram", 1000), ("tonne", "kilogram", 1000), ("gram", "milligram", 1000),
    ("litre", "millilitre", 1000), ("hour", "minute", 60), ("minute", "second", 60), ("day", "hour", 24),
    ("week", "day", 7), ("year", "month", 12), ("decade", "year", 10), ("century", "year", 100),
    ("foot", "inch", 12), ("yard", "foot", 3), ("square kilometre", "hectare", 100),
)  # fmt: skip
_UNIT_ALT = "|".join(sorted(map(re.escape, UNIT_OF), key=len, reverse=True))
QUANTITY = re.compile(
    rf"(?<![\w$£€.,:/-])(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|{_WORD_NUM}|one)"
    rf"(?P<sep>\s|-)(?P<unit>{_UNIT_ALT})(?![\w/])(?!-old|\s+(?:old|older|younger)\b)",
    re.IGNORECASE,
)


def unit_of(m: re.Match[str]) -> Unit | None:
    """The unit of a QUANTITY match; None inside a title ('30 Days of Night') or a year ('2010 m')."""
    surface = m.group("unit")
    if (surface[:1].isupper() and not surface.isupper()) or YEAR.fullmatch(m.group("num")):
        return None
    return UNIT_OF.get(surface) or UNIT_OF.get(surface.lower())


def unit_name(unit: Unit, value: float, m: re.Match[str]) -> str:
    """The new unit written like the old one: singular after a hyphen or when used as an adjective
    ('a ten minute standoff'), American when the source was ('meters')."""
    source = m.group("unit")
    old = UNIT_OF.get(source) or UNIT_OF.get(source.lower())
    singular = m.group("sep") == "-" or (old is not None and source == old.name and value != 1)
    return unit.name if singular else unit_text(unit, value, source)


def number_value(text: str) -> float | None:
    """'1,500' -> 1500.0, 'twenty-five' -> 25.0, 'one' -> 1.0; None when it is no number."""
    t = text.lower().replace(",", "")
    if re.fullmatch(r"\d+(?:\.\d+)?", t):
        return float(t)
    if t == "one":
        return 1.0
    tens, _, unit = t.partition("-")
    if tens in WORD_VALUES and (not unit or unit in WORD_VALUES):
        return float(WORD_VALUES[tens] + (WORD_VALUES[unit] if unit else 0))
    return None


def format_number(value: float, *, commas: bool = True) -> str:
    """1500.0 -> '1,500'; 2.50 -> '2.5'."""
    if value == int(value):
        return f"{int(value):,}" if commas else str(int(value))
    return f"{value:,.3f}".rstrip("0").rstrip(".") if commas else f"{value:.3f}".rstrip("0").rstrip(".")


def number_words(n: int) -> str | None:
    """English words for 0..999 ('twenty-five', 'three hundred and six'); None beyond."""
    if n < 20:
        return _SMALL[n]
    if n < 100:
        return _TENS[n // 10 - 2] + (f"-{_SMALL[n % 10]}" if n % 10 else "")
    if n < 1000:
        rest = n % 100
        return f"{_SMALL[n // 100]} hundred" + (f" and {number_words(rest)}" if rest else "")
    return None


def unit_text(unit: Unit, value: float, like: str) -> str:
    """The unit's name for this value, in the spelling of the source ('meters' stays American)."""
    name = unit.name if value == 1 else unit.plural
    return (
        name.replace("metre", "meter").replace("litre", "liter")
        if "meter" in like or "liter" in like
        else name
    )


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def eligible_number(m: re.Match[str], text: str) -> bool:
    """Not a year, not in a date, not a part of a name ('Apollo 11', 'Flight 9525', 'Number Four')."""
    before = text[: m.start()].rstrip().split(" ")[-1]
    if YEAR.fullmatch(m.group(0)) or any(d.start() <= m.start() < d.end() for d in DATE.finditer(text)):
        return False
    in_name = m.start() > 0 and before[:1].isupper() and m.group(0)[:1] not in "$£€"
    return not in_name and not (m.group(0)[:1].isupper() and m.start() > 0)


def replace_span(text: str, start: int, end: int, new: str) -> str:
    """`text` with [start:end] replaced, and an article right before it fixed ('a' -> 'an')."""
    before, after = text[:start], text[end:]
    article = re.search(r"\b([Aa])n?\s+$", before)
    if article:
        vowel = (new[:1].lower() in "aeiou" and not re.match(r"(?i)u[nst]i|use|eu|one", new)) or new[
            :4
        ] == "hour"
        before = before[: article.start()] + article.group(1) + ("n " if vowel else " ")
    return before + new + after
