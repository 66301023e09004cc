"""Contradictions of a grounded answer, for the synthetic training set (training only).

FactCC-style: each takes an answer the context states and changes one fact so that it now conflicts
with the context: a number, a date, a unit, a name, the polarity (negation) or a word for its
antonym. Swaps that could stay true are avoided: a bound ('more than 30', 'within 14 days') is never
moved, a negation is never added next to 'some'/'may', and a result the context states verbatim is
dropped. Each function returns (new text, what changed) or None when it does not apply.
"""

from __future__ import annotations

import math
import random
import re

from evaluators.offline.lexicon import PAIRS
from scripts.offline_quantities import (
    DATE,
    MONTHS,
    NUMBER,
    QUANTITY,
    UNITS,
    WEEKDAY,
    WORD_NUMBER,
    YEAR,
    Change,
    eligible_number,
    format_number,
    number_value,
    number_words,
    ordinal,
    replace_span,
    unit_name,
    unit_of,
)
from scripts.offline_scene import Scene, names_of

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_AUXES = "is|are|was|were|has|have|had|do|does|did|can|could|will|would|should|must"
_BOUND = re.compile(  # a bound stays true when moved one way: never swapped
    r"(?:(?:more|less|fewer|greater|higher|lower)\s+than|at\s+least|at\s+most|up\s+to|over|under|above|below"
    r"|exceeding|within|maximum\s+of|minimum\s+of)\s+[$£€]?$",
    re.IGNORECASE,
)


def _bumped(value: float, rng: random.Random, *, decimals: int, percent: bool) -> float:
    """Another plausible value, far enough from the original to be a different fact."""
    for _ in range(20):
        if value <= 12 and decimals == 0:
            new = value + rng.choice([-3, -2, -1, 1, 2, 3, 4, 5])
        else:
            new = value * (1 + rng.choice([-1, 1]) * rng.uniform(0.2, 0.7))
            zeros = len(str(int(value))) - len(str(int(value)).rstrip("0"))
            new = round(new / 10**zeros) * 10**zeros if decimals == 0 else round(new, decimals)
        if new > 0 and new != value and (not percent or value > 100 or new <= 100):
            return float(new)
    return value + 1


def _pick(text: str, scene: Scene, options: list[tuple[int, int, str]], rng: random.Random) -> Change:
    if not options:
        return None
    start, end, repl = rng.choice(options)
    out = replace_span(text, start, end, repl)
    return (out, f"{text[start:end]} -> {repl}") if scene.fresh(out, text) else None


def number_swap(text: str, scene: Scene, rng: random.Random) -> Change:
    """Change one number: '25 days' -> '31 days', '$1.2 million' -> '$1.6 million', 'three' -> 'five'."""
    options: list[tuple[int, int, str]] = []
    for m in NUMBER.finditer(text):
        if not eligible_number(m, text) or _BOUND.search(text[: m.start()]):
            continue
        digits, dec, suf = m.group("int"), m.group("dec") or "", m.group("suf") or ""
        new = _bumped(
            float(digits.replace(",", "") + dec), rng, decimals=max(0, len(dec) - 1), percent=suf == "%"
        )
        if suf in ("st", "nd", "rd", "th"):
            options.append((m.start("int"), m.end("suf"), ordinal(int(new))))
        else:  # the currency, the percent sign and 'million' stay
            options.append(
                (
                    m.start("int"),
                    m.end("dec") if dec else m.end("int"),
                    format_number(new, commas="," in digits),
                )
            )
    for m in WORD_NUMBER.finditer(text):
        value = number_value(m.group(0))
        if value is not None and eligible_number(m, text) and not _BOUND.search(text[: m.start()]):
            word = number_words(int(_bumped(value, rng, decimals=0, percent=False))) or ""
            options.append((m.start(), m.end(), word.capitalize() if m.group(0)[0].isupper() else word))
    return _pick(text, scene, [o for o in options if o[2]], rng)


def date_swap(text: str, scene: Scene, rng: random.Random) -> Change:
    """Change a day, a month, a year or a weekday: 'July 20, 1969' -> 'July 24, 1969'."""
    options: list[tuple[int, int, str]] = []
    dates = [(m.start(), m.end()) for m in DATE.finditer(text)]
    for m in DATE.finditer(text):
        part = rng.choice([k for k, v in m.groupdict().items() if v and k[0] in "dmy" and k != "n3"])
        old = m.group(part)
        if part[0] == "d":
            new = str(rng.choice([d for d in range(1, 29) if d != int(old)]))
        elif part[0] == "m":
            new = rng.choice([x for x in MONTHS if x != old])
        else:
            new = str(int(old) + rng.choice([-7, -4, -3, -2, -1, 1, 2, 3, 5, 9]))
        options.append((m.start(part), m.end(part), new))
    for m in YEAR.finditer(text):
        if not any(s <= m.start() < e for s, e in dates) and not _BOUND.search(text[: m.start()]):
            options.append(
                (m.start(), m.end(), str(int(m.group(0)) + rng.choice([-6, -3, -2, -1, 1, 2, 4, 8])))
            )
    for m in WEEKDAY.finditer(text):
        options.append((m.start(), m.end(), rng.choice([d for d in WEEKDAYS if d != m.group(0)])))
    return _pick(text, scene, options, rng)


def unit_swap(text: str, scene: Scene, rng: random.Random) -> Change:
    """Keep the number, change the unit to another of the same kind: '5 km' -> '5 miles'."""
    options = []
    for m in QUANTITY.finditer(text):
        unit, value = unit_of(m), number_value(m.group("num"))
        if unit is None or value is None or _BOUND.search(text[: m.start()]):
            continue
        others = [u for u in UNITS if u.dim == unit.dim and not 0.8 < u.factor / unit.factor < 1.25]
        others.sort(key=lambda u: abs(math.log(u.factor / unit.factor)))  # 'years' -> 'months', not 'seconds'
        if others:
            options.append((m.start("unit"), m.end("unit"), unit_name(rng.choice(others[:2]), value, m)))
    return _pick(text, scene, options, rng)


def entity_swap(text: str, scene: Scene, rng: random.Random) -> Change:
    """Put another name of the same kind in place of one: from this document when it has one (the
    hardest case: the context names both), else from another document."""
    asked = scene.question.lower()
    names = [n for n, _ in scene.names if n in text] if scene.pairs else names_of(text, scene.context)
    names = [n for n in dict.fromkeys(names) if n.lower() not in asked]
    if not names:
        return None
    old = rng.choice(names)
    kind = scene.kind(old, text)

    def usable(n: str) -> bool:
        low = n.lower()
        return (
            low not in text.lower() and old.lower() not in low and low not in old.lower() and low not in asked
        )

    here = [n for n, k in scene.names if k == kind and usable(n)]
    there = [n for n in scene.others.get(kind, []) if usable(n)]
    typed = bool(scene.pairs) or kind in ("person", "org", "place", "adjective")
    pool = here if here and (rng.random() < (0.6 if typed else 0.9) or not there) else there
    if not pool:
        return None
    new = rng.choice(pool)
    out = re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", lambda _: new, text)
    related = [n for n, _ in scene.names if n in out and n != new]
    if any(frozenset((new, n)) in scene.pairs for n in related):  # the context relates them too
        return None
    return (out, f"{old} -> {new}") if scene.fresh(out, text) else None


_NEGATED = (
    (re.compile(rf"\b({_AUXES})\s+not\s+"), r"\1 "),
    (re.compile(r"\b(is|are|was|were|has|have|had|does|do|did|could|would|should)n['’]t\b"), r"\1"),
    (re.compile(r"\b(?:can['’]t|cannot)\b"), "can"),
    (re.compile(r"\bwon['’]t\b"), "will"),
    (re.compile(r"\bnever\s+"), ""),
    (re.compile(r"\b(has|have|had|there\s+(?:is|are|was|were))\s+no\s+(?=[a-z])"), r"\1 "),
)  # fmt: skip
_QUANTIFIED = re.compile(
    r"\b(?:some|many|several|most|few|various|numerous|dozens|hundreds|thousands|may|might|could|perhaps)\b",
    re.I,
)
_AUX = re.compile(r"\b(is|are|was|were|will|would|should|must|can)\b(?!\s+(?:not|never)\b)")
_HAVE = re.compile(r"\b(has|have|had)\s+(?!been\b|\w+(?:ed|en)\b)")
_IRREGULAR_PAST = frozenset(
    """
    won lost wrote became began made took gave went came said told led left met ran saw sang built bought sold
    grew held knew fought taught brought spent kept drew flew threw rode spoke stood struck sent
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_DETERMINERS = frozenset({"a", "an", "the", "his", "her", "its", "their", "be", "been", "being"})


def negation(text: str, scene: Scene, rng: random.Random) -> Change:
    """Flip the polarity of the first clause: remove a not/never/no, else add one after the first
    auxiliary ('was' -> 'was not', 'has two' -> 'does not have two'), else put 'never' before the
    first past-tense verb ('founded' -> 'never founded')."""
    out = text
    for pattern, repl in _NEGATED:
        if pattern.search(text):
            out = pattern.sub(repl, text, count=1)
            break
    else:
        if _QUANTIFIED.search(text):
            return None
        aux, have = _AUX.search(text), _HAVE.search(text)
        if aux and (not have or aux.start() < have.start()):
            end = aux.end() + (5 if text[aux.end() : aux.end() + 5] == " also" else 0)  # 'is also not'
            out = text[:end] + " not" + text[end:]
        elif have:
            verb = {"has": "does not have", "have": "do not have", "had": "did not have"}[have.group(1)]
            out = text[: have.start()] + verb + " " + text[have.end() :]
        else:
            tokens = text.split(" ")
            for i, token in enumerate(tokens[1:12], start=1):
                past = token in _IRREGULAR_PAST or (
                    token.endswith("ed") and token.islower() and len(token) > 4
                )
                if past and tokens[i - 1].lower() not in _DETERMINERS:
                    out = " ".join([*tokens[:i], "never", *tokens[i:]])
                    break
    return (out, "negation flipped") if scene.fresh(out, text) else None


# Antonyms whose other senses are common in prose ('at home', 'the late X', 'in common'): not swapped.
_RISKY = frozenset(
    """
    old older oldest new newer newest young younger youngest elderly past present pass passed score home away
    net gross min max sale current cut like free fair day night hard soft easy good bad right input output
    local client server push pull add remove insert delete create destroy all none many few little live living
    support friend peace war top bottom love hate happy sad hot cold warm cool wet dry rich poor full empty
    deep heavy light lead leading single same different common rare simple complex close shut early late
    complete ahead behind possible impossible fewer known unknown
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_DOUBLE = frozenset({"ban", "stop", "permit", "admit", "commit", "refer", "prefer", "occur", "omit"})
_VERBS = frozenset(  # regular verbs of the lexicon, the only words inflected ('allowed' -> 'banned')
    """
    allow permit authorize authorise prohibit ban disallow include exclude approve reject deny veto accept
    refuse decline grant revoke enforce waive convict acquit arrest detain imprison release support oppose
    establish abolish ratify construct demolish destroy appoint hire dismiss sack lend borrow purchase gain
    appreciate depreciate import export deposit withdraw increase decrease reduce expand contract shrink raise
    lower start finish stop end open reopen close enter exit arrive depart qualify eliminate attack defend
    pass fail succeed survive enable disable connect disconnect encrypt decrypt install uninstall mount
    unmount lock unlock attach detach compress decompress encode decode serialize deserialize subscribe
    unsubscribe upload download agree disagree appear disappear continue discontinue obey disobey
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_PAST = {  # irregular forms: a swap keeps the form ('rose' -> 'fell', never 'rose' -> 'drop')
    **dict.fromkeys(("rose", "fell", "won", "lost", "bought", "sold", "built", "began"), "past"),
    **dict.fromkeys(("risen", "fallen", "begun", "forbidden"), "pp"),
}


def _form(word: str) -> str:
    """'past', 'pp', 'ing' or '' (a base form), so that 'died' never becomes 'survive'."""
    return _PAST.get(word) or ("past" if word.endswith("ed") else "ing" if word.endswith("ing") else "")


def _inflect(word: str, suffix: str) -> str:
    if suffix == "s":
        return word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")
    if word.endswith("e"):
        return word[:-1] + suffix
    return word + (word[-1] if word in _DOUBLE else "") + suffix


def _surface_antonyms() -> dict[str, tuple[str, ...]]:
    """Surface word -> antonyms to write in its place, in the same form ('increased' -> 'decreased',
    'rose' -> 'fell', never 'rose' -> 'drop')."""
    table: dict[str, set[str]] = {}
    for a, b in PAIRS:
        for x, y in ((a, b), (b, a)):
            if x in _RISKY or y in _RISKY or not x.isalpha() or not y.isalpha() or _form(x) != _form(y):
                continue
            table.setdefault(x, set()).add(y)
            if x in _VERBS and y in _VERBS:
                for suffix in ("s", "ed", "ing"):
                    table.setdefault(_inflect(x, suffix), set()).add(_inflect(y, suffix))
    return {k: tuple(sorted(v)) for k, v in table.items()}


SURFACE_ANTONYMS = _surface_antonyms()


def antonym_swap(text: str, scene: Scene, rng: random.Random) -> Change:
    """Replace one word by its antonym (evaluators.offline.lexicon): 'increased' -> 'decreased'.
    Not in 'at least'/'at first': 'at least one' and 'at most one' can both be true."""
    words = re.finditer(r"(?<!\bat )\b[a-z]+\b", text)
    options = [m for m in words if m.group(0) in SURFACE_ANTONYMS]
    return _pick(
        text, scene, [(m.start(), m.end(), rng.choice(SURFACE_ANTONYMS[m.group(0)])) for m in options], rng
    )
