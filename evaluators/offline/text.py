"""Word-level text analysis for the offline judge: content words, stems, numbers, entities (`negation`
reads where a negation stands and what it denies, `sentences` splits texts into sentences, clauses
and windows).

Everything here is pure, deterministic and cheap (regular expressions), because the offline judge
must evaluate hundreds of cases per second on one core.
Pure-ASCII text takes the English fast path it always took; any other text is folded (NFKC, case,
Latin accents, ё -> е) and tokenised script by script by `multilingual`, so that a Russian, Chinese
or Hindi answer yields claims and content words too, instead of none. Hyphens split words
everywhere ('in-sync' and 'in sync' give the same content words) except in codes ('B-52').
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache, lru_cache

from evaluators.offline import bounds, script_tokens
from evaluators.offline import multilingual as ml
from evaluators.offline.number_words import BIG, CARDINALS, TENS, spelled_numbers

_ASCII_WORDS = ml.ASCII_WORD.findall
_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(%|st|nd|rd|th)?(?![\w])")
# In other text a number may touch a CJK character ('高330米'), whose letters are word characters too.
_NOT_CJK_WORD = "[^\\W\u3005-\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
_NUMBER_ANY_SCRIPT = re.compile(
    rf"(?<!{_NOT_CJK_WORD})(?<!\.)[-+]?\$?(\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.(\d+))?(%|st|nd|rd|th)?(?!{_NOT_CJK_WORD})"
)
_UPPER = script_tokens.upper_class()
_NAME_WORD = rf"[{_UPPER}](?:[\w’'\-&\u0300-\u036f]|\.(?=[{_UPPER}]))*"  # (with combining accents: 'Па́вел')
# An initial's full stop joins it to the next name word ('C.S. Lewis', 'George W. Bush'), unless that
# word opens a sentence (`_INITIAL_ENDS`: 'plan B. The').
_INITIAL = rf"(?<=\b[{_UPPER}])(?<!\bI)\."  # (not the pronoun: 'So did I. John left.')
_INITIAL_GAP = rf"{_INITIAL}\s*"
_CAPITALISED = re.compile(
    rf"\b{_NAME_WORD}(?:(?:\s+(?:(?:of|de|la|van|von|the|and|for)\s+)?|{_INITIAL_GAP}){_NAME_WORD})*"
)
_INITIAL_ENDS = re.compile(rf"{_INITIAL}\s+(?=(\w+))")
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
    they're let's that's there's here's what's who's where's how's i've you've we've they've i'd you'd
    he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll it'll typically usually generally
    normally often commonly roughly approximately around nearly
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
STOPWORDS = ml.STOPWORDS | _ENGLISH_STOPWORDS
_NOT_CONTENT = STOPWORDS | NEGATIONS
NUMBER_WORDS = {w: str(v) for w, v in (*CARDINALS.items(), *TENS.items(), *BIG.items(), ("dozen", 12))}
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "s", "ly")


@lru_cache(maxsize=bounds.WORDS)
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


# Courtesy and assent: 'Absolutely!', 'Of course.', 'That is correct.', 'No problem!', 'Enjoy!' state no
# fact (an LLM's reply often opens with one; checked as a claim, it made a grounded answer half faithful).
_FILLER = frozenset(  # by stem, as `content_stems` gives them ('hope' -> 'hop')
    stem(w)
    for w in (
        *"""
    thank thanks hope help sure okay ok great hello hi welcome glad happy regard cheer sorry please feel
    free question let know
    absolutely certainly definitely exactly precisely indeed correct right true yes yeah yep yup agree agreed
    course problem pleasure enjoy awesome cool nice wow oh see interesting recommend highly
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
    return _ASCII_WORDS(folded) if plain else script_tokens.unicode_words(folded)


def is_content(word: str) -> bool:
    """A word that carries content: not a stopword, a negation or a single character."""
    return len(word) > 1 and word not in _NOT_CONTENT


def content_words(text: str) -> list[str]:
    """The words of `text` that carry content (`is_content`, inlined: every passage passes here), in
    order; the 'longer' of 'no longer' is part of its negation."""
    found = words(text)
    kept = [w for w in found if len(w) > 1 and w not in _NOT_CONTENT]
    if "longer" not in kept:
        return kept
    return [w for i, w in enumerate(found) if is_content(w) and (w != "longer" or found[i - 1 : i] != ["no"])]


def content_stems(text: str) -> list[str]:
    """Stems of the words that carry content (`content_words`), in order."""
    return [stem(w) for w in content_words(text)]


@lru_cache(maxsize=4096)
def stems_of(text: str) -> tuple[str, ...]:
    """`content_stems`, cached: the judge asks again and again for the same claims, questions, names
    and sentences. (Not `content_stems` itself: building an IDF table passes whole documents.)"""
    return tuple(content_stems(text))


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
    for start, span in _spans(text):
        span = span.strip(" .,'’-&").removesuffix("'s").removesuffix("’s")
        first = fold_word(span.split()[0]) if span else ""
        sentence_start = start == 0 or text[max(0, start - 2) : start].strip() in ml.SENTENCE_OPENERS
        if sentence_start and (_is_common(first, common) or _counts(first, span, common)):
            span = " ".join(span.split()[1:])
        folded = fold_word(span)
        acronym = (
            span.isupper() and folded in ml.STOPWORDS and folded not in _ENGLISH_STOPWORDS
        )  # 'IST', 'CES'
        if span and (acronym or folded not in STOPWORDS) and folded not in NEGATIONS:
            found[span] = None
    return list(found)


def _spans(text: str) -> Iterator[tuple[int, str]]:
    """The capitalised spans and where they start, cut where an initial's full stop ends a sentence."""
    for match in _CAPITALISED.finditer(text):
        span, start = match.group(0), match.start()
        while "." in span and (cut := _sentence_after_initial(span)):
            yield start, span[: cut.start()]
            span, start = span[cut.end() :], start + cut.end()
        yield start, span


def _sentence_after_initial(span: str) -> re.Match[str] | None:
    return next((gap for gap in _INITIAL_ENDS.finditer(span) if gap.group(1).lower() in STOPWORDS), None)


def _is_common(word: str, common: frozenset[str] | set[str]) -> bool:
    """A word that starts a sentence without being a name ('The', 'Not')."""
    return word in _NOT_CONTENT or stem(word) in common


def _counts(first: str, span: str, common: frozenset[str] | set[str]) -> bool:
    """A compound of a number and common words alone ('Seven-year-old had ...', 'Twenty-one died'), no
    name: its parts are not, but the whole word is no common one ('Candy-O' and 'Anti-Defamation
    League' stay)."""
    parts = first.split("-")
    return (
        " " not in span
        and any(p in NUMBER_WORDS for p in parts)
        and all(p in NUMBER_WORDS or _is_common(p, common) for p in parts)
    )


def _fold_word(word: str) -> str:
    return word.lower() if word.isascii() else ml.fold(word)


def is_factual(sentence: str) -> bool:
    """False for questions and content-free filler ('Thanks!', 'Hope this helps.', 'Спасибо!')."""
    s = sentence.rstrip()
    question = s.endswith("?") or (not s.isascii() and ml.QUESTION_END.search(s[-4:]) is not None)
    return not question and any(not _is_filler(st) for st in stems_of(sentence))


def is_noncommittal(text: str) -> bool:
    """True for evasive answers ('I don't know', 'the context does not say'): ragas zeroes these."""
    return bool(_NONCOMMITTAL.search(text))
