"""The tables behind `quantities`: units and their spellings, currencies and scale words.

A unit converts to its dimension's base unit, so that values compare across spellings ('5 km' and
'5,000 metres' are both 5000 m):

    length m, area m², volume l, mass kg, duration s, speed m/s, data_size byte, data_rate bit/s,
    temperature °C (with an offset), percent %, money:<ISO 4217 code> (no exchange rates: amounts in
    different currencies are different kinds and never compared).

Months and years convert at their average length (a year is 365.2425 days, a month a twelfth of
it), so '2 years' equals '24 months'. Spellings cover English abbreviations and plurals and the
common forms in German, French, Spanish, Italian, Portuguese, Russian (by stem: 'километр' takes
'километров'), Chinese and Japanese. The single letters m, g, t, l, h, s count only in lower case
('5G' is not five grams; 'L' is litres too), and 'pound' is a mass unless written £, GBP or
'pounds sterling'. Units are looked up as whole tokens, never by regex alternation: a dictionary
lookup per number (kept per token, `_spelling`) keeps `quantities` cheap enough for every sentence.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple


class Unit(NamedTuple):
    kind: str
    symbol: str
    factor: float  # base units per unit
    offset: float = 0.0  # added after scaling (temperatures only)


def words_of(text: str) -> list[str]:
    """A word list written as text: it reads better than a list of quoted words."""
    return text.split()


_YEAR = 365.2425 * 86400
# kind, symbol, factor, single-token spellings (case-folded; a leading '=' marks a case-sensitive one),
# Russian stems (take up to 3 more letters), multi-word spellings (regexes, keyed by their first word).
_TABLE: tuple[tuple[str, str, float, str, str, str], ...] = (
    (
        "speed",
        "km/h",
        1 / 3.6,
        "km/h kmh kph км/ч",
        "",
        r"km\s?per\s?hour|kilomet(?:er|re)s?\s+(?:per|an|a)\s+hour",
    ),
    ("speed", "mph", 0.44704, "mph", "", r"miles?\s+(?:per|an|a)\s+hour"),
    ("speed", "m/s", 1.0, "m/s м/с", "", r"met(?:er|re)s?\s+per\s+second"),
    ("speed", "kn", 1852 / 3600, "knot knots", "", ""),
    ("data_rate", "Gbit/s", 1e9, "gbps gbit/s gb/s", "", ""),
    ("data_rate", "Mbit/s", 1e6, "mbps mbit/s mb/s", "", ""),
    ("data_rate", "kbit/s", 1e3, "kbps kbit/s kb/s", "", ""),
    (
        "area",
        "km²",
        1e6,
        "km² km2 km^2 平方公里 平方千米",
        "",
        r"sq\.?\s?km|кв\.?\s?км|square\s+kilomet(?:er|re)s?",
    ),
    ("area", "mi²", 2589988.110336, "mi² mi2", "", r"sq\.?\s?mi(?:les?)?|square\s+miles?"),
    ("area", "ft²", 0.09290304, "ft² ft2", "", r"sq\.?\s?ft|square\s+f(?:ee|oo)t"),
    ("area", "m²", 1.0, "m² m2 m^2 平方米", "", r"sq\.?\s?m|кв\.?\s?м|square\s+met(?:er|re)s?"),
    ("area", "ha", 1e4, "ha hectare hectares hectárea hectáreas га", "гектар", ""),
    ("area", "acre", 4046.8564224, "acre acres", "", ""),
    ("volume", "m³", 1000.0, "m³ m3", "", r"cubic\s+met(?:er|re)s?"),
    ("volume", "ml", 1e-3, "ml millilitre millilitres milliliter milliliters мл 毫升", "", ""),
    ("volume", "l", 1.0, "=l =L litre litres liter liters litros litri л 升 リットル", "литр", ""),
    ("volume", "gal", 3.785411784, "gal gallon gallons", "", ""),
    ("volume", "bbl", 158.987294928, "bbl barrel barrels", "", ""),
    ("length", "nm", 1e-9, "nm nanometre nanometres nanometer nanometers", "", ""),
    ("length", "µm", 1e-6, "µm μm micron microns micrometre micrometres micrometer micrometers", "", ""),
    ("length", "mm", 1e-3, "mm millimetre millimetres millimeter millimeters мм 毫米", "миллиметр", ""),
    ("length", "cm", 1e-2, "cm centimetre centimetres centimeter centimeters см 厘米 公分", "сантиметр", ""),
    (
        "length",
        "km",
        1e3,
        "km kms kilometre kilometres kilometer kilometers kilomètre kilomètres kilómetros км "
        "公里 千米 キロメートル",
        "километр",
        "",
    ),
    ("length", "ly", 9.4607304725808e15, "光年", "", r"light[\s-]years?|световых\s+лет"),
    ("length", "nmi", 1852.0, "nmi", "", r"nautical\s+miles?"),
    ("length", "mi", 1609.344, "mi mile miles 英里", "мил", ""),
    ("length", "yd", 0.9144, "yd yds yard yards", "", ""),
    ("length", "ft", 0.3048, "ft feet foot 英尺", "фут", ""),
    ("length", "in", 0.0254, "inch inches in. 英寸", "дюйм", ""),
    ("length", "m", 1.0, "=m metre metres meter meters mètre mètres metros metri м 米 メートル", "метр", ""),
    ("mass", "µg", 1e-9, "µg μg mcg microgram micrograms", "", ""),
    ("mass", "mg", 1e-6, "mg milligram milligrams мг 毫克", "миллиграмм", ""),
    (
        "mass",
        "kg",
        1.0,
        "kg kgs kilo kilos kilogram kilograms kilogramme kilogrammes кг 公斤 千克 キログラム",
        "килограмм",
        "",
    ),
    ("mass", "g", 1e-3, "=g gram grams gramme grammes gramos grammi г гр 克 グラム", "грамм", ""),
    ("mass", "t", 1e3, "=t tonne tonnes ton tons т 吨 トン", "тонн", r"metric\s+tons?"),
    ("mass", "lb", 0.45359237, "lb lbs pound pounds 磅", "фунт", ""),
    ("mass", "oz", 0.028349523125, "oz ounce ounces", "унци", ""),
    ("duration", "ms", 1e-3, "ms msec millisecond milliseconds 毫秒", "миллисекунд", ""),
    (
        "duration",
        "s",
        1.0,
        "=s sec secs second seconds segundo segundos seconde secondes sekunde sekunden сек 秒",
        "секунд",
        "",
    ),
    (
        "duration",
        "min",
        60.0,
        "min mins minute minutes minuto minutos minuti minuten мин 分钟 分間",
        "минут",
        "",
    ),
    (
        "duration",
        "h",
        3600.0,
        "=h hr hrs hour hours hora horas heure heures stunde stunden ч час часа часов 小时 時間",
        "",
        "",
    ),
    (
        "duration",
        "day",
        86400.0,
        "day days día días dia dias jour jours giorno giorni tag tage tagen дня дней день "
        "сутки суток 天 日間",
        "",
        "",
    ),
    (
        "duration",
        "week",
        604800.0,
        "week weeks wk wks semaine semaines semana semanas settimana settimane woche wochen 周 週間",
        "недел",
        "",
    ),
    ("duration", "fortnight", 1209600.0, "fortnight fortnights", "", ""),
    (
        "duration",
        "month",
        _YEAR / 12,
        "month months mo mos mes meses mois mese mesi monat monate monaten 个月 か月 ヶ月 カ月",
        "месяц",
        "",
    ),
    (
        "duration",
        "year",
        _YEAR,
        "year years yr yrs año años anos ans année années anno anni jahr jahre jahren лет "
        "год года году 年 年間",
        "",
        "",
    ),
    ("duration", "decade", 10 * _YEAR, "decade decades", "десятилет", ""),
    (
        "duration",
        "century",
        100 * _YEAR,
        "century centuries siècle siècles siglo siglos jahrhundert jahrhunderte век века веков 世纪",
        "",
        "",
    ),
    (
        "temperature",
        "°C",
        1.0,
        "°c ℃ celsius centigrade",
        "",
        r"degrees?\s+(?:celsius|centigrade|c)|градус\w*\s+цельсия",
    ),
    ("temperature", "°F", 5 / 9, "°f ℉ fahrenheit", "", r"degrees?\s+(?:fahrenheit|f)"),
    ("temperature", "K", 1.0, "kelvin kelvins", "", ""),
    ("data_size", "PB", 1e15, "pb petabyte petabytes", "", ""),
    ("data_size", "TiB", 2.0**40, "tib", "", ""),
    ("data_size", "TB", 1e12, "tb terabyte terabytes тб", "", ""),
    ("data_size", "GiB", 2.0**30, "gib", "", ""),
    ("data_size", "GB", 1e9, "gb gigabyte gigabytes гб", "", ""),
    ("data_size", "MiB", 2.0**20, "mib", "", ""),
    ("data_size", "MB", 1e6, "mb megabyte megabytes мб", "", ""),
    ("data_size", "KiB", 1024.0, "kib", "", ""),
    ("data_size", "kB", 1e3, "kb kilobyte kilobytes кб", "", ""),
    ("data_size", "B", 1.0, "byte bytes", "байт", ""),
    ("data_size", "bit", 0.125, "bit bits", "", ""),
    (
        "percent",
        "%",
        1.0,
        "% ％ percent pct prozent",
        "процент",
        r"per\s?cent|percentage\s+points?|pour\s?cent|por\s?ciento|per\s?cento",
    ),
    ("money:USD", "USD", 1.0, "dollar dollars usd", "долл", r"us\s?dollars?"),
    ("money:EUR", "EUR", 1.0, "euro euros eur € евро", "", ""),
    ("money:GBP", "GBP", 1.0, "gbp £", "", r"pounds?\s+sterling"),
    ("money:JPY", "JPY", 1.0, "yen jpy 円", "", ""),
    ("money:CNY", "CNY", 1.0, "yuan renminbi cny rmb 元", "", ""),
    ("money:INR", "INR", 1.0, "rupee rupees inr ₹", "", ""),
    ("money:RUB", "RUB", 1.0, "rouble roubles ruble rubles rub ₽ руб руб.", "рубл", ""),
    ("money:CHF", "CHF", 1.0, "chf", "", r"swiss\s+francs?"),
)
_OFFSET = {"°F": -32 * 5 / 9, "K": -273.15}
UNITS: tuple[Unit, ...] = tuple(Unit(k, s, f, _OFFSET.get(s, 0.0)) for k, s, f, *_ in _TABLE)
_CASED: dict[str, int] = {}
_FOLDED: dict[str, int] = {}
_STEMS: dict[str, int] = {}
_MULTI: dict[str, list[tuple[re.Pattern[str], int]]] = {}  # by the first 2-3 letters of their first word
for _i, (*_, _spellings, _stems, _multi) in enumerate(_TABLE):
    for _s in _spellings.split():
        if _s.startswith("="):
            _CASED[_s[1:]] = _i
        else:
            _FOLDED.setdefault(_s, _i)
    _STEMS.update(dict.fromkeys(_stems.split(), _i))
    for _alternative in filter(None, re.split(r"\|(?![^(]*\))", _multi)):  # top-level alternatives
        _key = re.match(r"[^\W\d_]+", _alternative).group()[:3]  # type: ignore[union-attr]
        _MULTI.setdefault(_key, []).append((re.compile(_alternative + r"(?![^\W\d_])", re.IGNORECASE), _i))
_CJK_UNIT_LENGTHS = sorted({len(s) for s in _FOLDED if not s.isascii() and s[0] >= "\u3000"}, reverse=True)

SCALES: dict[str, float] = {
    **dict.fromkeys(words_of("thousand k тыс тыс. тысяч тысячи тысяча"), 1e3),
    **dict.fromkeys(words_of("lakh lakhs"), 1e5),
    **dict.fromkeys(
        words_of("million millions mn mln mio mio. millionen millones millón млн миллион миллиона"), 1e6
    ),
    **dict.fromkeys(words_of("миллионов"), 1e6),
    **dict.fromkeys(words_of("crore crores"), 1e7),
    **dict.fromkeys(
        words_of("billion billions bn bln mrd mrd. milliarde milliarden milliards млрд миллиард"), 1e9
    ),
    **dict.fromkeys(words_of("миллиарда миллиардов"), 1e9),
    **dict.fromkeys(words_of("trillion trillions tn трлн"), 1e12),
    **{"万": 1e4, "萬": 1e4, "亿": 1e8, "億": 1e8, "m": 1e6, "b": 1e9},
}
CURRENCY_ONLY_SCALES = frozenset({"m", "b"})  # '$5m', '$2b'; elsewhere 'm' is metres
CURRENCY_BEFORE = {
    "US$": "USD", "$": "USD", "A$": "AUD", "C$": "CAD", "HK$": "HKD", "€": "EUR", "£": "GBP", "¥": "JPY",
    "₹": "INR", "Rs": "INR", "Rs.": "INR", "₽": "RUB", "₩": "KRW", "₺": "TRY", "₪": "ILS", "฿": "THB",
    "USD": "USD", "EUR": "EUR", "GBP": "GBP", "CHF": "CHF", "JPY": "JPY", "CNY": "CNY", "INR": "INR",
    "RUB": "RUB",
}  # fmt: skip
CURRENCY_PREFIX = "|".join(re.escape(c) for c in sorted(CURRENCY_BEFORE, key=len, reverse=True))


def unit_of(token: str, text: str, start: int) -> tuple[int, int] | None:
    """(index into UNITS, end) of the unit spelled by `token` (found at `start` in `text`), if any."""
    multi, single = _spelling(token)
    for pattern, index in multi:
        match = pattern.match(text, start)
        if match:
            return index, match.end()
    return (single[0], start + single[1]) if single else None


@lru_cache(maxsize=4096)
def _spelling(token: str) -> tuple[tuple[tuple[re.Pattern[str], int], ...], tuple[int, int] | None]:
    """(multi-word spellings to try at the token, in order; (index, length) of the unit the token alone
    spells): all that depends on the token alone, so that the words after numbers are looked up once."""
    if token[0] >= "\u3000":  # CJK: the longest unit the characters start with ('330米高')
        for n in _CJK_UNIT_LENGTHS:
            if n <= len(token) and token[:n] in _FOLDED:
                return (), (_FOLDED[token[:n]], n)
        return (), None
    key = token.casefold().replace(" ", "")
    multi = tuple(_MULTI.get(key[:3], []) + (_MULTI.get(key[:2], []) if len(key) > 2 else []))
    bare = key.removesuffix(".")
    for candidate, length in ((key, len(token)), (bare, len(token) - len(key) + len(bare))):
        written = token[:length]
        found = _CASED.get(written)
        if found is None and not (length == 1 and written.isascii() and written.isalpha()):  # 'm': cased only
            found = _FOLDED.get(candidate)
        if found is not None:
            return multi, (found, length)
    for cut in range(len(bare), max(len(bare) - 4, 2), -1):  # Russian stems: 'километров' -> 'километр'
        if bare[:cut] in _STEMS:
            return multi, (_STEMS[bare[:cut]], len(bare))
    return multi, None
