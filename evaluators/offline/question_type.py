"""What kind of answer a question asks for, and whether a statement supplies that kind of thing.

Embeddings and word overlap see that "Berlin is the capital of Germany" is about the Berlin office, not
that it leaves "When is the Berlin office open?" unanswered. A question announces the type of its
answer (when: a time; how many: a number; how do I: an instruction; is/does: a yes or no), and a
responsive statement supplies something of that type that the question does not already contain.

Regular expressions and small English word lists (`answer_words`) only: this runs for every answer
statement. A form not recognised is "unknown", and an unknown type never counts against a statement;
so is every question that does not look English (no other language's question words are listed), and
every choice question ('A or B?'), whose answer repeats an option the question already names.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from evaluators.offline.answer_words import HEADS as _HEADS
from evaluators.offline.answer_words import HOW as _HOW
from evaluators.offline.answer_words import PHRASES as _PHRASES
from evaluators.offline.answer_words import STEMS as _S
from evaluators.offline.answer_words import WORDS as _W
from evaluators.offline.answer_words import AnswerType
from evaluators.offline.text import content_stems, entities, numbers, stem

T, Q, PL, PE, PR, R, YN = AnswerType


_FUNCTION = _W["function"] | _W["aux"]
_STOP_SCAN = _W["scan stop"] | _W["aux"] | _W["wh"] | _W["determiners"]
_AUX_AFTER = _W["sentence break"] | {"and"}
_AUX_SUBJECT = _W["pronouns"] | _W["determiners"]  # an English question's subject after its auxiliary
_REPLY = _W["yes"] | _W["no"]  # a reply's first word that answers yes or no ('Yes, ...', 'Never on ...')
_BARE_WORDS = 4  # a stance this short answers by itself ('No, it does not.')
_UNSURE = frozenset({"no idea", "no clue", "no comment", "not sure", "not certain", "no answer"})
_PHRASE = {t: tuple(f" {p} " for p in text.split("|")) for t, text in _PHRASES.items()}

_QUOTED = re.compile(r'"[^"]*"|“[^”]*”')
_CHOICE = re.compile(r"\bor\b(?!\s+not\b)")  # 'Was A or B formed first?': the answer repeats an option
_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+(?:[.,:]\d+)*|[?;:,.!]")
_WH_IS = re.compile(r"\b(what|when|where|who|how|why)'s\b", re.IGNORECASE)
_TAG = re.compile(r",\s*(?:right|correct|true|isn't it|aren't they|don't they|doesn't it)\s*\?\s*$")
_SPECIAL = (
    (re.compile(r"\bwhat (?:should|can|do|must) (?:i|we|you) do\b"), frozenset({PR})),
    (re.compile(r"\bwhat (?:do|does|did|will|would) .{0,40}\bcosts?\b"), frozenset({Q})),
    (
        re.compile(r"\bwhat (?:caused|causes|cause|made|makes|led to|leads to|triggered|triggers)\b"),
        frozenset({R}),
    ),
    (re.compile(r"\b(?:since|until|till|by) when\b"), frozenset({T})),
    (re.compile(r"\bfor what (?:reason|purpose)\b"), frozenset({R})),
)


def looks_english(text: str) -> bool:
    """A wh-word first, or an auxiliary then a pronoun or determiner, or at least a fifth of the
    lower-case words are English function words
    (names are left out of the count: HotpotQA questions are mostly names)."""
    tokens = [t for t in _TOKEN.findall(text.replace("’", "'")) if t[0].isalpha()]
    if not tokens:
        return False
    if tokens[0].lower() in _W["wh"]:
        return True
    if tokens[0].lower() in _W["aux"] and tokens[1:2] and tokens[1].lower() in _AUX_SUBJECT:
        return True  # 'Does the plan include dental cover?', 'Can I ...' (not 'Was ist ...')
    lower = [t for t in tokens[1:] if t.islower()] or [tokens[0].lower()]
    return sum(t in _FUNCTION for t in lower) >= max(1.0, 0.2 * len(lower))


def _head_types(tokens: list[str], start: int) -> frozenset[AnswerType]:
    """The type named by the head noun after 'what'/'which': the last word of the noun phrase ('what
    year', 'what is the maximum daily dose', 'which distance runner' is a runner), the phrase ending
    before a verb-looking word ('which company makes'); 'the name of the person' names a person."""
    i = start + (tokens[start : start + 1] in (["is"], ["are"], ["was"], ["were"]))
    while i < len(tokens) and tokens[i] in _W["determiners"]:
        i += 1
    if tokens[i + 1 : i + 2] == ["of"] and tokens[i : i + 1] in (["kind"], ["type"], ["sort"], ["name"]):
        return _head_types(tokens, i + 2)
    phrase: list[str] = []
    for token in tokens[i : i + 6]:
        if token in _STOP_SCAN or len(phrase) == 4:
            break
        if phrase and phrase[-1] in _HEADS and token not in _HEADS and token.endswith(("s", "ed")):
            break  # 'which company makes', 'which actor played'
        if not token.isdigit():
            phrase.append(token)
    return _HEADS.get(phrase[-1], frozenset()) if phrase else frozenset()


def _indirect_follows(tokens: list[str], i: int) -> bool:
    """'Do you know when...', 'Can you tell me how many...': the wh-word decides, not the yes/no form."""
    window = tokens[i + 1 : i + 6]
    return any(t in _W["indirect"] for t in window) and any(t in _W["wh"] for t in window)


@lru_cache(maxsize=4096)
def asked(question: str) -> frozenset[AnswerType]:
    """The answer types a question asks for (several for 'When was it completed and how tall is it?');
    empty when unknown ('What does min.insync.replicas control?', 'Tell me about X', other languages)."""
    question = _WH_IS.sub(r"\1 is", _QUOTED.sub(" X ", question.replace("’", "'")))
    if not looks_english(question) or _CHOICE.search(question):
        return frozenset()
    original = _TOKEN.findall(question)
    tokens = [t.lower() for t in original]
    text = " ".join(tokens)
    found = {t for pattern, types in _SPECIAL if pattern.search(text) for t in types}
    first = next((i for i, t in enumerate(tokens) if t not in _W["fillers"]), len(tokens))
    for i, token in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else "?"
        before = tokens[i - 1] if i > 0 else ""
        indirect = before in _W["indirect"] or (before in {"me", "us", "out"} and tokens[i - 2 : i - 1] != [])
        opening = i == first or (i == first + 1 and before in _W["prepositions"])  # 'To whom', 'Since when'
        clause_start = opening or before in _W["clause break"] or indirect
        if i and original[i].istitle() and not opening and before not in _W["sentence break"]:
            continue  # 'the film Which Way Is Up', 'How to Make It in America': a title
        if token in {"what", "which"}:
            found |= _head_types(tokens, i + 1)
        elif token == "how" and after in _HOW and (clause_start or after not in {"to", "come"}):
            found |= _HOW[after]
        elif token == "how" and clause_start and after in _W["modals"] and i + 3 < len(tokens):
            subject, verb = tokens[i + 2], tokens[i + 3]
            agent = subject in _W["agents"] or (subject in {"a", "an"} and verb in {"user", "customer"})
            if agent and verb not in {"say", "call", "spell", "pronounce"}:
                found.add(PR)
        elif token in {"who", "whom", "whose"} and ((clause_start and before != ",") or after == "?"):
            found.add(PE)
        elif token in {"when", "where", "why"} and clause_start:
            if after in _W["aux"] or after in {"to", "not", "?", "and", "or", ","} or indirect:
                found.add({"when": T, "where": PL, "why": R}[token])
        elif token in _W["aux"] and (i == first or (before in _AUX_AFTER and after in _W["pronouns"])):
            found |= set() if _indirect_follows(tokens, i) else {YN}
    if _TAG.search(question.lower()):
        found.add(YN)
    return frozenset(found)


# -- what a statement supplies: stem sets and phrase lookups, not big regex alternations (Python's re
# tries every alternative at every position: that cost ~0.5 ms a statement) ---------------------------

_UNIT = (
    r"%|percent|per\s?cent|mg|g|kg|km|m|cm|mm|ml|l|metres?|meters?|miles?|feet|ft|inches|tonnes?|tons?|litres?|"
    r"liters?|[kmgt]b|ms|[a-z]*bytes|dollars?|euros?|pounds?|people|users|employees|items|units|calories|times|"
    r"copies|pages|words|degrees"
)
_NUMBER = re.compile(
    rf"(?<![\w.:$€£-])([$€£]?)(\d{{1,3}}(?:,\d{{3}})+|\d+)(\.\d+)?(s)?(?![\w.]\d)(?:\s*({_UNIT})\b)?", re.I
)
_MONTH = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b"
)
_TIME = re.compile(
    rf"\b(?:1\d{{3}}|20\d\d)\b(?!\s*(?:{_UNIT})\b)|\b\d{{1,2}}(?::\d\d)?\s?(?:am|pm|a\.m\.|p\.m\.|o'clock|h)(?!\w)|"
    r"\b\d{1,2}:\d\d\b|\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{4}-\d\d-\d\d\b|\b\d{2,4}s\b|"
    r"24/7|\bQ[1-4]\b|\b\d+\s?(?:AD|BC|BCE|CE)\b|\b(?:March|May)\s+\d|\b(?:\d+|in|of|early|late|mid|since|until|by)\s+"
    r"(?:March|May)\b|^(?:March|May)$",
    re.I,
)


@lru_cache(maxsize=1024)
def _given(question: str) -> tuple[str, frozenset[str], frozenset[str]]:
    """What a question already says, shared by the statements of an answer: text, stems, numbers."""
    return question.lower(), frozenset(content_stems(question)), frozenset(numbers(question))


def _new_name(statement: str, question: str, common: frozenset[str]) -> bool:
    """A name the question does not already give; months and weekdays are times, not names."""
    given, given_stems, _ = _given(question)
    fragment = len(statement.split()) <= 4  # 'England': a one-word answer is a name, even a common one
    return any(
        e.lower() not in given and not set(content_stems(e)) <= given_stems | _S["time"]
        for e in entities(statement, common=frozenset() if fragment else common)
    )


def _quantity(statement: str, given_numbers: frozenset[str], tokens: list[str], new: set[str]) -> bool:
    """A count, measure or amount the question does not give: not a year (unless it has a unit), not
    the day of a date, not a time of day, not a decade ('1990s')."""
    for match in _NUMBER.finditer(statement):
        currency, integer, fraction, decade, unit = match.groups()
        value = (integer.replace(",", "").lstrip("0") or "0") + (fraction or "").rstrip("0").rstrip(".")
        if value in given_numbers or decade or statement[match.end() : match.end() + 1] == ":":
            continue
        year = len(integer) == 4 and 1000 <= int(integer) <= 2199 and not (fraction or currency or unit)
        if not year and not _MONTH.search(statement, max(0, match.start() - 12), match.end() + 12):
            return True
    one = any(t == "one" and tokens[i + 1 : i + 2] not in (["of"], ["another"]) for i, t in enumerate(tokens))
    return bool(new & _S["quantity"]) or one or any(t.endswith(("teenth", "tieth")) for t in new)


def _stance(text: str, tokens: list[str], given: frozenset[str]) -> bool:
    """A yes/no question is answered by 'yes'/'no', by a stance on what it asks ('closed', 'not'), or
    by stating the fact asked about (most of the question's content words)."""
    shared = {s for s in content_stems(text) if s in given}
    if (tokens and tokens[0] in _REPLY) or (given and len(shared) >= 0.6 * len(given)):
        return True
    stance = any(stem(t) in _S["stance"] or t.endswith("n't") for t in tokens)
    return stance and (bool(shared) or len(tokens) <= _BARE_WORDS)


def bare_stance(statement: str) -> bool:
    """'Yes.', 'Not really.', 'No, it does not.': a few words opening with a stance, an answer in itself
    to a yes/no question, however little of the question it repeats ('I don't know' is none)."""
    tokens = [t.lower() for t in _TOKEN.findall(statement.replace("’", "'")) if t[0].isalpha()]
    if not 0 < len(tokens) <= _BARE_WORDS or stem(tokens[0]) not in _S["stance"]:
        return False
    return " ".join(tokens[:2]) not in _UNSURE  # 'No idea.', 'Not sure.': no stance taken


def supplies(
    statement: str,
    question: str = "",
    common: frozenset[str] = frozenset(),
    types: frozenset[AnswerType] | None = None,
) -> frozenset[AnswerType]:
    """The answer types a statement supplies as new information (a number or name the question gives
    does not count). `common`, the IDF table's common stems, tells a name from a capitalised first
    word; `types` limits the checks to those (the ones asked). A statement of four words or more that
    does not look English supplies every type: these word lists cannot read it."""
    text = statement.replace("’", "'").strip()
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    if len(tokens) >= 4 and not looks_english(text):  # another language: cannot tell, so it misses nothing
        return frozenset(AnswerType) if types is None else types
    _, given, given_numbers = _given(question)
    new = {stem(t) for t in tokens if t[0].isalpha()} - given
    joined, pairs = f" {' '.join(tokens)} ", list(itertools.pairwise(tokens))
    phrase = {t: any(p in joined for p in _PHRASE[t]) for t in _PHRASE}
    first = stem(next((t for t in tokens if t not in {"to", "then", "and", ","}), ""))
    checks = {
        T: lambda: bool(new & _S["time"]) or _time(text, pairs, given_numbers),
        Q: lambda: phrase[Q] or _quantity(text, given_numbers, tokens, new),
        PL: lambda: bool(new & _S["place"]) or _new_name(text, question, common),
        PE: lambda: bool(new & _S["person"]) or _new_name(text, question, common),
        PR: lambda: (
            first in _S["imperative"] or bool(new & _S["procedure"]) or phrase[PR] or _steps(text, pairs)
        ),
        R: lambda: bool(new & _S["reason"]) or phrase[R] or any(_causal(a, b) for a, b in pairs),
        YN: lambda: _stance(text, tokens, given),
    }
    return frozenset(kind for kind in (AnswerType if types is None else types) if checks[kind]())


def _time(text: str, pairs: list[tuple[str, str]], given_numbers: frozenset[str]) -> bool:
    """A counted period ('3 weeks', 'a day') or a date, year or clock time the question does not give."""
    if any(stem(b) in _S["time units"] and (a in _W["counters"] or a[0].isdigit()) for a, b in pairs):
        return True
    for value in given_numbers:  # 'in 1969' is no news when the question says 1969
        text = re.sub(rf"(?<![\d.]){re.escape(value)}(?!\.?\d)", " ", text)
    return bool(_TIME.search(text))


def _steps(text: str, pairs: list[tuple[str, str]]) -> bool:
    """Code ('`kubectl`', '--flag', 'key=value'), 'To do X, ...', 'by doing', or a passive instruction."""
    if re.search(r"`|--[a-z]|\w=\w|^[Tt]o \w+[^,]*, \w", text):
        return True
    return any(
        (a in {"is", "are", "be", "gets"} and b in _W["participles"]) or (a == "by" and b.endswith("ing"))
        for a, b in pairs
    )


def _causal(a: str, b: str) -> bool:
    """'to avoid', 'to protect' (a purpose); 'since the' (a cause, not 'since 2019')."""
    return (a == "to" and b in _W["purpose"]) or (a == "since" and b.isalpha() and stem(b) not in _S["time"])
