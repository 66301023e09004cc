"""Text analysis for the offline judge: sentences, clauses, content words, numbers, entities, negation.

Everything here is pure, deterministic and cheap (regular expressions plus `nupunkt`'s packaged
sentence model), because the offline judge must evaluate hundreds of cases per second on one core.
Pure-ASCII text takes the English fast path it always took; any other text is folded (NFKC, case,
Latin accents, ё -> е) and tokenised script by script by `multilingual`, so that a Russian, Chinese
or Hindi answer yields claims and content words too, instead of none. Hyphens split words
everywhere ('in-sync' and 'in sync' give the same content words) except in codes ('B-52').
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, replace
from functools import cache, lru_cache

import nupunkt

from evaluators.offline import multilingual as ml
from evaluators.offline.number_words import spelled_numbers
from evaluators.offline.quantities import Quantity, quantities
from evaluators.offline.units import BIG, CARDINALS, TENS

# Negations are counted on unsplit words: 'not-for-profit' and 'no-nonsense' negate nothing.
_ASCII_WORDS = ml.ASCII_WORD.findall
_UNSPLIT_WORD = re.compile(r"[a-z][a-z'\-]*", re.ASCII)
_INNER_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(%|st|nd|rd|th)?(?![\w])")
# In other text a number may touch a CJK character ('高330米'), whose letters are word characters too.
_NOT_CJK_WORD = "[^\\W\u3005-\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
_NUMBER_ANY_SCRIPT = re.compile(
    rf"(?<!{_NOT_CJK_WORD})(?<!\.)[-+]?\$?(\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.(\d+))?(%|st|nd|rd|th)?(?!{_NOT_CJK_WORD})"
)
_UPPER = ml.upper_class()
_NAME_WORD = rf"[{_UPPER}](?:[\w’'\-&\u0300-\u036f]|\.(?=[{_UPPER}]))*"  # (with combining accents: 'Па́вел')
_CAPITALISED = re.compile(rf"\b{_NAME_WORD}(?:\s+(?:(?:of|de|la|van|von|the|and|for)\s+)?{_NAME_WORD})*")
_CONJUNCTIONS = "and|but|while|whereas|although|though|yet"
_OTHER_CONJUNCTIONS = (
    "но|а|однако|хотя|aber|jedoch|während|obwohl|mais|tandis que|alors que|pero|aunque|mientras que"
)
_HEDGES = "typically|usually|generally|normally|often|commonly"  # ', typically 2 of 3': a fact of its own
_CLAUSE_BREAK = re.compile(
    rf";\s+|,\s+(?=(?:{_CONJUNCTIONS}|{_OTHER_CONJUNCTIONS}|{_HEDGES})\s)|\s+(?=whereas\s)|(?<=；)|，(?=(?:但是?|而|然而))"
)
# After these a part is a fact of its own even when short ('...; malaria prophylaxis too').
_STRONG_BREAK = re.compile(r";\s+|(?<=；)|,\s+(?=plus\s)")
_LEADING_CONJUNCTION = re.compile(
    rf"^(?:(?:{_CONJUNCTIONS}|{_OTHER_CONJUNCTIONS}|plus)\s+|(?:但是?|而|然而)，?)", re.IGNORECASE
)
_HAS_CJK = re.compile(f"[{ml.CJK}]")  # (only on short clauses)
_LATIN_LETTER = re.compile("[A-Za-z]")
_NONCOMMITTAL = re.compile(
    r"\b(i (?:do not|don't|cannot|can't) (?:know|say|tell|answer)|i am not sure|i'm not sure|"
    r"no information|not (?:mentioned|provided|specified|stated) in|unable to (?:answer|determine|find)|"
    r"cannot be determined|there is no (?:mention|information)|"
    r"я не знаю|не (?:указано|упоминается|сказано)|нет информации|je ne sais pas|aucune information|"
    r"ich weiß (?:es )?nicht|keine informationen|no (?:lo )?sé|no hay información)\b|"
    r"不知道|无法回答|没有(?:相关)?信息|わかりません",
    re.IGNORECASE,
)

NEGATIONS = ml.NEGATIONS | frozenset(
    """
    not no never none nor neither without cannot nobody nothing n't isn't wasn't aren't weren't doesn't
    didn't don't hasn't haven't hadn't won't wouldn't can't couldn't shouldn't mustn't lacks unable false
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_ENGLISH_STOPWORDS = frozenset(
    """
    a an the and or but if then else of to in on at by for with from into onto over under as is are
    was were be been being am do does did doing has have had having it its it's this that these
    those there here which who whom whose what when where why how i me my we our you your he him his
    she her they them their so than too very can could will would shall should may might must also
    just about such only both each any all some more most other another same own up down out off
    again further once s t d ll re ve m o y yes well like one's per via i'm you're he's she's we're
    they're let's typically usually generally normally often commonly roughly approximately around
    nearly
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
STOPWORDS = ml.STOPWORDS | _ENGLISH_STOPWORDS
NUMBER_WORDS = {w: str(v) for w, v in (*CARDINALS.items(), *TENS.items(), *BIG.items(), ("dozen", 12))}
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "s", "ly")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude suffix stripper: good enough to match 'starred'/'starring' and both sides use it. Only
    Latin-script words are stripped (accents dropped: 'Pelé' and 'Pele' match); any other word is
    only folded ('Москве' stays 'москве')."""
    w = word.lower().replace("’", "'")
    if not w.isascii():
        w = ml.fold(w)
        if not ml.is_latin(w):
            return ml.native_stem(w)
    if w.endswith("'s"):
        w = w[:-2]
    for suffix in _SUFFIXES:
        if suffix == "es" and w.endswith("ees"):
            continue  # 'trees', 'fees': only the 's' goes
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: -len(suffix)]
            if suffix in ("ies", "ied"):
                w += "y"
            elif suffix in ("ed", "ing") and len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsfz":
                w = w[:-1]  # 'submitted', 'stopping' -> 'submit', 'stop'
            break
    # A final 'e' and the verb ending '-ate' go too: 'complete' meets 'completed', 'vaccine'
    # meets 'vaccinated' and 'vaccination'.
    if w.endswith("ation") and len(w) >= 9:
        w = w[:-5]
    elif w.endswith("e") and len(w) > 3 and not w.endswith("ee"):
        w = w[:-1]
    if w.endswith("at") and len(w) >= 7:
        w = w[:-2]
    return w


_FILLER = frozenset(  # by stem, as `content_stems` gives them ('hope' -> 'hop')
    stem(w)
    for w in (
        *"""
    thank thanks hope help sure okay ok great hello hi welcome glad happy regard cheer sorry please feel
    free question let know
    """.split(),  # noqa: SIM905 (a word list reads better as text)
        *(w for w in ml.FILLER if ml.is_latin(w)),
    )
)


@cache
def _native_filler() -> frozenset[str]:
    """The filler stems of other scripts, on first need: Russian ones take a Snowball stemmer, whose
    import (~50 ms) English-only traffic should not pay. They stay in their script (never ASCII)."""
    return frozenset(stem(w) for w in ml.FILLER if not ml.is_latin(w))


def _is_filler(stem_: str) -> bool:
    return stem_ in _FILLER or (not stem_.isascii() and stem_ in _native_filler())


def words(text: str) -> list[str]:
    """Lower-cased (case-folded) word tokens, numbers included, in order. Hyphens split words except
    before a digit ('in-sync' -> 'in', 'sync'; 'covid-19' stays); CJK text gives bigrams (see
    `multilingual`); digits of any script come out as ASCII."""
    lowered = text.lower().replace("’", "'")
    if lowered.isascii():
        return _ASCII_WORDS(lowered)
    folded, plain = ml.token_text(lowered)
    return _ASCII_WORDS(folded) if plain else ml.unicode_words(folded)


def content_stems(text: str) -> list[str]:
    """Stems of the words that carry content (stopwords and negations dropped), in order."""
    return [stem(w) for w in words(text) if len(w) > 1 and w not in STOPWORDS and w not in NEGATIONS]


@lru_cache(maxsize=16384)
def stems_of(text: str) -> tuple[str, ...]:
    """`content_stems`, cached: the judge asks again and again for the same claims, questions, names
    and sentences. (Not `content_stems` itself: building an IDF table passes whole documents.)"""
    return tuple(content_stems(text))


# 'not more than 4 g' is a bound ('at most 4 g'), not a denial: the negation is not counted.
_BOUND = re.compile(
    r"\b(?:not|no|never|(?:do|does|did|must|should|may|can|could|will)(?: not|n't))"
    r"(?: take| use| give| be)?\s+(?:(?:more|less|fewer|later|earlier|longer|higher|lower) than|exceed)"
)


def negation_count(text: str) -> int:
    """Negation words and "n't" endings (CJK: negation characters), hyphenated compounds and bounds
    ('no more than', 'must not exceed') excepted."""
    lowered, plain = _BOUND.sub(" ", text.lower().replace("’", "'")), True
    if not lowered.isascii():
        lowered, plain = ml.token_text(lowered)
    if plain:
        return sum(1 for w in _UNSPLIT_WORD.findall(lowered) if w in NEGATIONS or w.endswith("n't"))
    tokens = ml.unicode_words(_INNER_HYPHEN.sub("", lowered))
    return sum(1 for w in tokens if w in NEGATIONS or w.endswith("n't")) + len(ml.CJK_NEGATION.findall(text))


def numbers(text: str) -> list[str]:
    """Numbers in canonical form ('1,000' -> '1000', '5.50' -> '5.5', '٣' -> '3', 'three' -> '3',
    'twenty-four' -> '24'), digits first, then spelled-out ones (not ordinals), each in order."""
    found: list[str] = []
    ascii_text = text.isascii()
    for match in (_NUMBER if ascii_text else _NUMBER_ANY_SCRIPT).finditer(text):
        integer, fraction = match.group(1), match.group(2) or ""
        if not ascii_text:
            integer, fraction = ml.ascii_digits(integer), ml.ascii_digits(fraction)
        value = integer.replace(",", "").lstrip("0") or "0"
        fraction = fraction.rstrip("0")
        found.append(f"{value}.{fraction}" if fraction else value)
    found.extend(
        str(int(v)) if v.is_integer() else str(v) for v, ordinal in spelled_numbers(text) if not ordinal
    )
    return found


def entities(text: str, *, common: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Capitalised spans (names, places, months, titles) of Latin, Greek or Cyrillic script, in
    order and without duplicates ('Пётр Иванов', 'Zürich').

    A capitalised word at the start of a sentence is only a name when it is not a common word;
    `common` gives the stems of common words (the IDF table's most frequent ones).
    """
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    found: dict[str, None] = {}
    fold_word = str.lower if text.isascii() else _fold_word
    for match in _CAPITALISED.finditer(text):
        span = match.group(0).strip(" .,'’-&").removesuffix("'s").removesuffix("’s")
        start = match.start()
        first = fold_word(span.split()[0]) if span else ""
        sentence_start = start == 0 or text[max(0, start - 2) : start].strip() in ml.SENTENCE_OPENERS
        if sentence_start and (first in STOPWORDS or stem(first) in common or first in NEGATIONS):
            span = " ".join(span.split()[1:])
        folded = fold_word(span)
        acronym = (
            span.isupper() and folded in ml.STOPWORDS and folded not in _ENGLISH_STOPWORDS
        )  # 'IST', 'CES'
        if span and (acronym or folded not in STOPWORDS) and folded not in NEGATIONS:
            found[span] = None
    return list(found)


def _fold_word(word: str) -> str:
    return word.lower() if word.isascii() else ml.fold(word)


def sentences(text: str) -> tuple[str, ...]:
    """Sentences of a text (nupunkt's packaged model; newlines also end a sentence). Text that is not
    pure ASCII is first cut after sentence ends nupunkt does not know (。！？ । ؟ and the Greek ';'),
    and nupunkt's cuts after non-English abbreviations ('т. е.', 'z. B.', 'El Sr.', '20. Juli') are undone."""
    return tuple(s for block in text.split("\n") if block.strip() for s in _block_sentences(block))


@lru_cache(maxsize=8192)
def _block_sentences(block: str) -> tuple[str, ...]:
    """Sentences of one line: cached apart, since a passage is tokenised alone (its windows) and
    again inside the passages joined by blank lines (context statements)."""
    if block.isascii():
        found = nupunkt.sent_tokenize(block)  # plain strings (tuples only when asked for spans)
        found = [s.strip() for s in found if isinstance(s, str) and s.strip()]
        return tuple(_rejoin(found, titles=False) if len(found) > 1 else found)
    pieces = _hard_pieces(block) if ml.has_special_stops(block) else [block]
    return tuple(_rejoin([s for piece in pieces for s in _punkt(piece)], titles=True))


def _hard_pieces(block: str) -> list[str]:
    pieces, start = [], 0
    for match in ml.HARD_STOP.finditer(block):
        pieces.append(block[start : match.end()])
        start = match.end()
    return [p for p in (*pieces, block[start:]) if p.strip()]


def _punkt(piece: str) -> list[str]:
    if not any(c in piece for c in ".!?"):
        return [piece.strip()]
    return [s.strip() for s in nupunkt.sent_tokenize(piece) if isinstance(s, str) and s.strip()]


def _rejoin(found: list[str], *, titles: bool) -> list[str]:
    """Undo nupunkt's cuts after '20.' before a month and after a non-English abbreviation before a
    lower-case word or a digit; and, in text that is not ASCII, after a title before a name (English
    'Sr.' ends sentences: 'Ross Bagdasarian, Sr. The films ...')."""
    merged: list[str] = []
    for sentence in found:
        previous = merged[-1] if merged else ""
        tail = previous[previous.rfind(" ") + 1 : -1].lstrip("(«„\"'") if previous.endswith(".") else ""
        if (
            tail
            and len(tail) <= 8
            and _continues(tail.lower() if tail.isascii() else ml.fold(tail), sentence, titles)
        ):
            merged[-1] = f"{previous} {sentence}"
        else:
            merged.append(sentence)
    return merged


def _continues(word: str, sentence: str, titles: bool) -> bool:
    """Whether `sentence` continues the one that ended with `word` and a full stop."""
    head = sentence[:1]
    if word.isdigit():  # '20.' before 'Juli 1969'
        return len(word) <= 2 and ml.fold(sentence.split()[0].rstrip(".,")) in ml.MONTHS
    if word in ml.ABBREVIATIONS and (head.islower() or head.isdigit()):
        return True
    return titles and word in ml.TITLES and ml.fold(sentence.split()[0]) not in STOPWORDS


def clauses(sentence: str, *, min_words: int = 4) -> list[str]:
    """Split a sentence where it joins independent facts ('; ', ', plus ', ', and ', ', but ', ...).

    A part shorter than `min_words` words stays attached to its neighbour: 'salt, and pepper'
    is one fact, 'Paris is the capital, and Lyon is the third largest city' is two; after a
    semicolon or ', plus' two content words make a fact ('...; malaria prophylaxis too').
    """
    merged: list[str] = []
    for segment in _STRONG_BREAK.split(sentence):
        parts = [p.strip(" ,;") for p in _CLAUSE_BREAK.split(segment) if p and p.strip(" ,;")]
        for i, part in enumerate(parts):
            # The first part after a semicolon or ', plus' stands alone when it names two things.
            alone = i == 0 and len(content_stems(part)) >= 2
            if merged and not alone and (_length(part) < min_words or _length(merged[-1]) < min_words):
                merged[-1] = f"{merged[-1]}, {part}"
            else:
                merged.append(part)
    return [_as_sentence(p) for p in merged] if len(merged) > 1 else [sentence.strip()]


def _length(part: str) -> int:
    """Words of a clause; a CJK clause has no spaces, so its tokens count instead."""
    return len(part.split()) if part.isascii() or not _HAS_CJK.search(part) else len(words(part))


def _as_sentence(part: str) -> str:
    part = _LEADING_CONJUNCTION.sub("", part.strip().strip("；"))
    part = part[:1].upper() + part[1:]
    if _HAS_CJK.search(part[-1:]) and not _LATIN_LETTER.search(part):
        return f"{part}。"
    return part if part.endswith((".", "!", "?", "。", "！", "？", "।")) else f"{part}."


def is_factual(sentence: str) -> bool:
    """False for questions and content-free filler ('Thanks!', 'Hope this helps.', 'Спасибо!')."""
    s = sentence.rstrip()
    question = s.endswith("?") or (not s.isascii() and ml.QUESTION_END.search(s[-4:]) is not None)
    return not question and any(not _is_filler(st) for st in stems_of(sentence))


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

    @property
    def quantities(self) -> tuple[Quantity, ...]:
        """Numbers, amounts and dates of the window (spans index into `text`). Read on first use and
        cached by text: a claim looks at its best window's only, so reading every window up front
        would double the cost of `windows` for nothing."""
        return quantities(self.text)


def windows(reference: str, node: int) -> tuple[Window, ...]:
    """Every sentence, then every pair of adjacent sentences (a claim may draw on both); single
    sentences come first so that a tie picks the tighter window (negation is judged on it)."""
    found = _windows(reference)
    return found if node == 0 else tuple(replace(w, node=node) for w in found)


@lru_cache(maxsize=4096)
def _windows(reference: str) -> tuple[Window, ...]:
    """The windows of a passage as node 0, tokenised once whatever its position: hallucination
    judges each passage alone after faithfulness judged them together."""
    sents = sentences(reference) or (reference,)
    singles = [
        Window(0, s, frozenset(stems_of(s)), frozenset(numbers(s)), negation_count(s), True) for s in sents
    ]
    pairs = [
        Window(
            0,
            f"{a.text} {b.text}",
            a.stems | b.stems,
            a.numbers | b.numbers,
            a.negations + b.negations,
            False,
        )
        for a, b in itertools.pairwise(singles)
    ]
    return (*singles, *pairs)
