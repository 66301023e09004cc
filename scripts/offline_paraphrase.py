"""Label-preserving rewrites of a grounded answer, for the synthetic training set (training only).

A judge that matches words calls a correct answer unsupported as soon as it is worded unlike the
passage. These rewrites (synonyms, contractions, number, unit and date formats, clause order, a
dropped detail) stay supported, so the model learns which differences do not matter. Every rewrite
keeps each number and name of the source (the value, not the spelling), except `drop_detail`, which
only removes. Each function returns (new text, what changed) or None when it does not apply.
"""

from __future__ import annotations

import random
import re

from evaluators.offline.sentences import sentences
from scripts.offline_quantities import (
    DATE,
    EXACT,
    MONTHS,
    NUMBER,
    QUANTITY,
    UNIT_OF,
    WORD_NUMBER,
    Change,
    eligible_number,
    format_number,
    number_value,
    number_words,
    ordinal,
    replace_span,
    unit_name,
    unit_of,
    unit_text,
)

# One-way replacements that keep the meaning in ordinary factual prose. Inflected forms are listed
# because the rewrite is a plain token substitution. (Kept out of the runtime lexicon on purpose.)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "film": ("movie",), "films": ("movies",), "movie": ("film",), "movies": ("films",),
    "began": ("started",), "started": ("began",), "begin": ("start",), "starts": ("begins",),
    "purchased": ("bought",), "bought": ("purchased",), "acquired": ("bought",),
    "approximately": ("about", "around", "roughly"), "roughly": ("approximately", "about"),
    "large": ("big",), "big": ("large",), "huge": ("enormous",), "enormous": ("huge",),
    "located": ("situated",), "situated": ("located",), "famous": ("well-known", "renowned"),
    "well-known": ("famous",), "renowned": ("famous",), "died": ("passed away",), "stated": ("said",),
    "children": ("kids",), "kids": ("children",), "assisted": ("helped",),
    "completed": ("finished",), "attempted": ("tried",),
    "quickly": ("rapidly",), "rapidly": ("quickly",), "numerous": ("many",),
    "often": ("frequently",), "frequently": ("often",), "nearly": ("almost",), "almost": ("nearly",),
    "entire": ("whole",), "company": ("firm",),
    "car": ("vehicle",), "cars": ("vehicles",), "employees": ("staff", "workers"), "workers": ("employees",),
    "singer": ("vocalist",), "author": ("writer",), "writer": ("author",),
    "song": ("track",), "album": ("record",), "wrote": ("penned", "authored"),
    "written": ("penned", "authored"), "defeated": ("beat",), "injured": ("hurt",),
    "previously": ("earlier", "formerly"), "formerly": ("previously",), "currently": ("presently", "now"),
    "subsequently": ("later",), "residents": ("inhabitants",), "inhabitants": ("residents",),
    "nation": ("country",), "region": ("area",),
    "founded": ("established",), "built": ("constructed",), "constructed": ("built",),
    "revealed": ("disclosed",), "requires": ("needs",), "allows": ("permits",),
    "allowed": ("permitted",), "permitted": ("allowed",), "prohibited": ("banned", "forbidden"),
    "banned": ("prohibited",), "among": ("amongst",), "amongst": ("among",), "while": ("whilst",),
    "whilst": ("while",), "towards": ("toward",), "toward": ("towards",), "upon": ("on",),
    "despite": ("in spite of",), "because": ("since",), "whom": ("who",),
    "starred": ("appeared",), "showed": ("demonstrated",),
    "assist": ("help",), "obtain": ("get",), "obtained": ("got",), "commenced": ("began",),
}  # fmt: skip
_PHRASES = (  # (pattern, replacement): function words and contractions, both ways; lower case only,
    # so that a title keeps its words ('That's My Boy')
    (r"\bin order to\b", "to"), (r"\bprior to\b", "before"), (r"\bdue to\b", "because of"),
    (r"\bbecause of\b", "due to"), (r"\balso known as\b", "also called"), (r"\bknown as\b", "called"),
    (r"\bis starring\b", "stars"), (r"\bfollowing (?=(?:the|his|her|their|its|a|an)\b)", "after "),
    (r"\b(about|around) (?=\d)", "approximately "), (r"\bin (?=1\d{3}\b|20\d\d\b)", "in the year "),
    (r"\bdo not\b", "don't"), (r"\bdoes not\b", "doesn't"), (r"\bdid not\b", "didn't"),
    (r"\bis not\b", "isn't"), (r"\bwas not\b", "wasn't"), (r"\bwere not\b", "weren't"),
    (r"\bare not\b", "aren't"), (r"\bhas not\b", "hasn't"), (r"\bhave not\b", "haven't"),
    (r"\bcannot\b", "can't"), (r"\bwill not\b", "won't"), (r"\bwould not\b", "wouldn't"),
    (r"\b(it|that|there|he|she) is\b", r"\1's"), (r"\b(they|we) are\b", r"\1're"),
    (r"\bdon't\b", "do not"), (r"\bdoesn't\b", "does not"), (r"\bdidn't\b", "did not"),
    (r"\bisn't\b", "is not"), (r"\bwasn't\b", "was not"), (r"\bcan't\b", "cannot"),
    (r"\bwon't\b", "will not"),
    (r"\b(it|that|there)'s\b", r"\1 is"), (r"\b(\w+) which (?=[a-z])", r"\1 that "),
)  # fmt: skip


_PHRASE_PATTERNS = tuple((re.compile(p), r) for p, r in _PHRASES)


def synonym_paraphrase(text: str, rng: random.Random) -> Change:
    """Swap one to three lower-case words or phrases for a synonym or a contraction (or back)."""
    options: list[tuple[int, int, str]] = []
    for m in re.finditer(r"\b[a-z][a-z'-]*\b", text):
        if m.group(0) in SYNONYMS:
            options.append((m.start(), m.end(), rng.choice(SYNONYMS[m.group(0)])))
    for pattern, repl in _PHRASE_PATTERNS:
        for m in pattern.finditer(text):
            options.append((m.start(), m.end(), m.expand(repl)))
    rng.shuffle(options)
    chosen: list[tuple[int, int, str]] = []
    for start, end, repl in options:
        if len(chosen) < rng.randint(1, 3) and all(end <= s or start >= e for s, e, _ in chosen):
            chosen.append((start, end, repl))
    if not chosen:
        return None
    out = text
    for start, end, repl in sorted(chosen, reverse=True):
        out = replace_span(out, start, end, repl)
    return (out, ", ".join(f"{text[s:e]} -> {r}" for s, e, r in sorted(chosen))) if out != text else None


_ORDINALS = {1: "first", 2: "second", 3: "third", 5: "fifth", 8: "eighth", 9: "ninth", 12: "twelfth"}


def number_paraphrase(text: str, rng: random.Random) -> Change:
    """The same value written another way: '1,000' -> '1000', '3' -> 'three', 'twelve' -> '12',
    '2.5 million' -> '2,500,000', '45%' -> '45 percent', '19th' -> 'nineteenth'."""
    options: list[tuple[int, int, str]] = []
    for m in NUMBER.finditer(text):
        if not eligible_number(m, text):
            continue
        cur, digits, dec, suf, scale = (
            m.group("cur") or "",
            m.group("int"),
            m.group("dec") or "",
            m.group("suf"),
            m.group("scale"),
        )
        value = int(digits.replace(",", ""))
        if scale and not suf:
            full = float(f"{value}{dec}") * {"million": 1e6, "billion": 1e9, "trillion": 1e12}[scale.strip()]
            options.append((m.start(), m.end(), f"{cur}{format_number(full)}"))
        elif suf == "%":
            options.append((m.start(), m.end(), f"{digits}{dec} {rng.choice(['percent', 'per cent'])}"))
        elif suf in ("st", "nd", "rd", "th") and value <= 19:
            options.append((m.start(), m.end(), _ORDINALS.get(value, f"{number_words(value)}th")))
        elif not suf and not dec and not cur and 2 <= value <= 99 and text[m.end() : m.end() + 1] != "-":
            options.append((m.start(), m.end(), number_words(value) or digits))
        elif not suf and "," in digits:
            options.append((m.start(), m.end(), f"{cur}{digits.replace(',', '')}{dec}"))
        elif not suf and not dec and value >= 10000:
            options.append((m.start(), m.end(), f"{cur}{value:,}"))
        elif not suf and value >= 1_000_000 and value % 100_000 == 0:
            options.append((m.start(), m.end(), f"{cur}{format_number(value / 1e6)} million"))
    for m in WORD_NUMBER.finditer(text):
        spelled = number_value(m.group(0))
        hyphenated = "-" in (text[m.end() : m.end() + 1], text[m.start() - 1 : m.start()])  # 'top-three'
        if spelled is not None and not hyphenated and eligible_number(m, text):
            options.append((m.start(), m.end(), format_number(spelled)))
    if not options:
        return None
    start, end, repl = rng.choice(options)
    return text[:start] + repl + text[end:], f"{text[start:end]} -> {repl}"


def unit_paraphrase(text: str, rng: random.Random) -> Change:
    """An exact conversion: '2 years' -> '24 months', '5 km' -> '5,000 metres', '90 minutes' ->
    '1.5 hours'; failing that, the unit spelled out ('5 km' -> '5 kilometres')."""
    conversions, spellings = [], []
    for m in QUANTITY.finditer(text):
        value, unit = number_value(m.group("num")), unit_of(m)
        if value is None or unit is None:
            continue
        for big, small, factor in EXACT:
            target = None
            if unit.name == big and value * factor <= 100_000:
                target = (value * factor, small)
            elif unit.name == small and round(value / factor, 1) == value / factor and value / factor >= 1:
                target = (value / factor, big)
            if target:
                name = unit_name(UNIT_OF[target[1]], target[0], m)
                conversions.append((m.start(), m.end(), f"{format_number(target[0])}{m.group('sep')}{name}"))
        if (
            m.group("unit") in unit.forms
            and m.group("unit") not in (unit.name, unit.plural)
            and len(m.group("unit")) <= 4
        ):
            spellings.append((m.start(), m.end(), f"{m.group('num')} {unit_text(unit, value, '')}"))
    options = conversions or spellings
    if not options:
        return None
    start, end, repl = rng.choice(options)
    return replace_span(text, start, end, repl), f"{text[start:end]} -> {repl}"


def date_paraphrase(text: str, rng: random.Random) -> Change:
    """The same date in another format: 'July 20, 1969' -> '20 July 1969', '1969-07-20',
    '20/07/1969' (only when the day is over 12, so it cannot be read month first)."""
    options: list[tuple[int, int, str]] = []
    for m in DATE.finditer(text):
        g = {k: v for k, v in m.groupdict().items() if v}
        month = next((MONTHS.index(v) + 1 for k, v in g.items() if k.startswith("m")), None)
        month = month or int(g.get("n3", "0"))
        day = int(next(v for k, v in g.items() if k.startswith("d")))
        year = next((v for k, v in g.items() if k.startswith("y")), None)
        if not 1 <= month <= 12 or not 1 <= day <= 31:
            continue
        name, formats = MONTHS[month - 1], []
        if year:
            formats = [f"{day} {name} {year}", f"{name} {day}, {year}", f"{year}-{month:02d}-{day:02d}",
                       f"the {ordinal(day)} of {name} {year}", f"{name} {ordinal(day)}, {year}"]  # fmt: skip
            formats += [f"{day:02d}/{month:02d}/{year}"] if day > 12 else []
        else:
            formats = [
                f"{day} {name}",
                f"{name} {day}",
                f"{name} {ordinal(day)}",
                f"the {ordinal(day)} of {name}",
            ]
        formats = [f for f in formats if f != m.group(0)]
        options.append((m.start(), m.end(), rng.choice(formats)))
    if not options:
        return None
    start, end, repl = rng.choice(options)
    return text[:start] + repl + text[end:], f"{text[start:end]} -> {repl}"


_FRONTED = re.compile(
    r"^(?P<pp>(?:In|On|At|During|After|Before|By|Since|Following|According to|Earlier|Later|Last|This)"
    r"\b[^,]{2,50}),\s+(?P<rest>[^,]+[^.!?])(?P<end>[.!?])$"
)
_TRAILING_PP = re.compile(
    r"^(?P<rest>[^,]{12,}?)\s+(?P<pp>(?:in|on|during|since|according to)\s+[^,]{2,40})(?P<end>[.!?])$"
)
_NEEDS_ITS_PP = re.compile(  # 'starred in X' cannot become 'In X, ... starred'
    r"\b(?:starred|starring|appeared|appears|born|lived|lives|based|located|situated|involved|interested"
    r"|included|participated|resulted|specialises|specializes|believes|believed|engaged|invested|set|held"
    r"|took part|is|was|\w+ed)$"
)
_NAMES_AND = re.compile(  # two people as the subject: 'Jane Doe and John Roe wrote...'
    r"^(?P<a>[A-Z][a-z]+(?: [A-Z][a-z]+){1,2}) and (?P<b>[A-Z][a-z]+(?: [A-Z][a-z]+){1,2}) (?=[a-z])"
)
_VOICE = (  # the same knowledge-graph fact, active or passive
    (re.compile(r"^(?P<a>.+?) is starring (?P<b>.+?)\.$"), "{b} starred in {a}."),
    (re.compile(r"^(?P<a>.+?) starred in (?P<b>.+?)\.$"), "{b} is starring {a}."),
    (re.compile(r"^(?P<a>.+?) is written by (?P<b>.+?)\.$"), "{b} wrote {a}."),
    (re.compile(r"^(?P<a>.+?) wrote (?P<b>.+?)\.$"), "{b} was written by {a}."),
    (re.compile(r"^(?P<a>.+?) is directed by (?P<b>.+?)\.$"), "{b} directed {a}."),
    (re.compile(r"^(?P<a>.+?) directed (?P<b>.+?)\.$"), "{b} was directed by {a}."),
    (re.compile(r"^(?P<a>.+?) is produced by (?P<b>.+?)\.$"), "{b} produced {a}."),
    (re.compile(r"^(?P<a>.+?) produced (?P<b>.+?)\.$"), "{b} was produced by {a}."),
)
_PRONOUN_START = re.compile(
    r"^(?:He|She|It|They|His|Her|Its|Their|This|These|That|Those|The|But|And|However)\b"
)
_SUBJECT_WORDS = frozenset(
    """
        the a an he she it they this these that his her its their there we our
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if first.lower() in _SUBJECT_WORDS else text


def reorder(text: str, rng: random.Random) -> Change:
    """Move a fronted or trailing phrase ('In 1990, X did Y.' <-> 'X did Y in 1990.'), swap two
    coordinated names, or swap two sentences that do not refer back to each other."""
    sents = list(sentences(text))
    options: list[str] = []
    if len(sents) == 2 and not _PRONOUN_START.match(sents[1]):
        options.append(f"{sents[1]} {sents[0]}")
    for i, s in enumerate(sents):
        rewrites: list[str] = []
        if m := _FRONTED.match(s):
            pp = m["pp"][:1].lower() + m["pp"][1:]
            rewrites.append(f"{m['rest'][:1].upper()}{m['rest'][1:]} {pp}{m['end']}")
        elif (
            (m := _TRAILING_PP.match(s))
            and len(m["rest"].split()) >= 4
            and not _NEEDS_ITS_PP.search(m["rest"])
        ):
            rewrites.append(f"{m['pp'][:1].upper()}{m['pp'][1:]}, {_lower_first(m['rest'])}{m['end']}")
        if m := _NAMES_AND.match(s):
            rewrites.append(f"{m['b']} and {m['a']} {s[m.end() :]}")
        for pattern, template in _VOICE:
            if (m := pattern.match(s)) and m["a"][:1].isupper() and m["b"][:1].isupper():
                rewrites.append(template.format(a=m["a"], b=m["b"]))
                break
        options += [" ".join([*sents[:i], r, *sents[i + 1 :]]) for r in rewrites]
    options = [o for o in options if o != text]
    return (rng.choice(options), "reordered") if options else None


_DROPPABLE = (
    re.compile(r"\s+\([^()]{2,80}\)"),  # a parenthesis
    re.compile(r",\s+(?:who|which|whose)\s+[^,]{3,80},(?=\s)(?!\s\d)"),  # an aside (not ending in a date)
    re.compile(r",\s+according to [^,.]{3,60}(?=[.!?]$)"),  # the attribution
    re.compile(r",\s+[a-z]+ing\s+[^,]{3,80}(?=[.!?]$)"),  # a trailing participle clause
    re.compile(r"\s+(?:in|on|during|since)\s+(?:the year\s+)?(?:1\d{3}|20\d\d)(?=[.!?]$)"),  # a trailing date
)
_NON_MONOTONE = re.compile(
    r"\b(?:not|no|never|none|nor|only|every|all|each|without|n't|neither|unless|except|first|last|always)\b",
    re.IGNORECASE,
)


def drop_detail(text: str, rng: random.Random) -> Change:
    """A shorter true answer: drop a parenthesis, an aside, an attribution or a trailing date.
    Never under negation or 'only'/'all'/'first', where dropping a detail can change the truth."""
    if _NON_MONOTONE.search(text):
        return None
    options = []
    offset = 0
    for sentence in sentences(text):
        offset = text.index(sentence, offset)
        for p in _DROPPABLE:
            for m in p.finditer(sentence):
                if len((sentence[: m.start()] + sentence[m.end() :]).split()) >= 6:
                    options.append((offset + m.start(), offset + m.end()))
    if not options:
        return None
    start, end = rng.choice(options)
    return text[:start] + text[end:], f"dropped '{text[start:end].strip(' ,')}'"
