"""Sentences, clauses and passage windows: the units the offline judge compares.

Sentences come from `nupunkt`'s packaged model, with sentence ends it does not know (。！？ । ؟)
and its cuts after non-English abbreviations mended; clauses split a sentence where it joins
independent facts; windows are a passage's sentences and pairs of adjacent sentences, tokenised
once (`text` has the word-level analysis they use).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from functools import lru_cache

import nupunkt
import nupunkt.core.tokens

from evaluators.offline import bounds
from evaluators.offline import multilingual as ml
from evaluators.offline.quantities import Quantity, quantities, reads_apart
from evaluators.offline.text import STOPWORDS, content_stems, stems_of, words

CONJUNCTIONS = "and|but|while|whereas|although|though|yet"  # joining two facts
_OTHER_CONJUNCTIONS = (
    "но|а|однако|хотя|aber|jedoch|während|obwohl|mais|tandis que|alors que|pero|aunque|mientras que"
)
_HEDGES = "typically|usually|generally|normally|often|commonly"  # ', typically 2 of 3': a fact of its own
# ', I am not sure about X' / ', I highly recommend it': the speaker's own clause, a claim of its own
# (claims.answer_claims then reads it as a taste, a hedge or an abstention). Not ", I've lost my leg'".
_SPEAKER = (
    r"(?:I|we)(?:'m|’m|'d|’d|\s+am|\s+do|\s+would|\s+really|\s+also|\s+just|\s+highly|\s+personally)*"
    r"(?:\s+not|n't|n’t)?\s+(?:sure|certain|know|think|believe|guess|recommend|suggest|like|love|enjoy|prefer|hope)\b"
)
_CLAUSE_BREAK = re.compile(
    rf";\s+|,\s+(?=(?:{CONJUNCTIONS}|{_OTHER_CONJUNCTIONS}|{_HEDGES})\s|{_SPEAKER})|\s+(?=whereas\s)|(?<=；)"
    r"|，(?=(?:但是?|而|然而))"
)
# After these a part is a fact of its own even when short ('...; malaria prophylaxis too').
_STRONG_BREAK = re.compile(r";\s+|(?<=；)|,\s+(?=plus\s)")
_LEADING_CONJUNCTION = re.compile(
    rf"^(?:(?:{CONJUNCTIONS}|{_OTHER_CONJUNCTIONS}|plus)\s+|(?:但是?|而|然而)，?)", re.IGNORECASE
)
_HAS_CJK = re.compile(f"[{ml.CJK}]")  # (only on short clauses)
_LATIN_LETTER = re.compile("[A-Za-z]")

# nupunkt memoises what it derives of each distinct token string up to 65,536 of them (~12 MB in every
# judge worker, filling for hours on traffic where ids and numbers keep coming); beyond its bound it
# derives again, which costs little. Bounded like this judge's own word caches (tests/collector/
# test_memory_bounds.py checks that nupunkt still reads this setting).
NUPUNKT_TOKENS_MEMOISED = bounds.WORDS
nupunkt.core.tokens._DERIVED_CACHE_SIZE = NUPUNKT_TOKENS_MEMOISED


def sentences(text: str) -> tuple[str, ...]:
    """Sentences of a text (nupunkt's packaged model; newlines also end a sentence). Text that is not
    pure ASCII is first cut after sentence ends nupunkt does not know (。！？ । ؟ and the Greek ';'),
    and nupunkt's cuts after non-English abbreviations ('т. е.', 'z. B.', 'El Sr.', '20. Juli') are undone."""
    return tuple(s for block in text.split("\n") if block.strip() for s in _block_sentences(block))


@lru_cache(maxsize=1024)  # per passage: ~10 KB each (docs/offline-judge.md, Memory)
def _block_sentences(block: str) -> tuple[str, ...]:
    """Sentences of one line: cached apart, since a passage is tokenised alone (its windows) and
    again inside the passages joined by blank lines (context statements)."""
    if block.isascii():
        found = _punkt_sentences(block)
        found = _rejoin(found, titles=False) if len(found) > 1 else found
    else:
        pieces = _hard_pieces(block) if ml.has_special_stops(block) else [block]
        found = _rejoin([s for piece in pieces for s in _punkt(piece)], titles=True)
    return tuple(s for found_sentence in found for s in _unglued(found_sentence))


# Two sentences glued without a space ('... college years.The Ateneo de Manila University ...'), as
# text concatenated from paragraphs often is: a word of lower-case letters, a stop, a capitalised word.
_GLUED_STOP = re.compile(r"(?<=[a-z]{3}[.!?])(?=[A-Z][a-z])")


# Statements glued without a space, as knowledge-graph triples are when concatenated (HaluEval
# dialogue's knowledge): a capitalised word or a number right after a lower-case letter or a digit,
# where it repeats what came before. Either the text before ends with the word ('Ryan Reynolds starred
# in TurboTurbo is starring Snoop Dogg'), or the two words it begins stand earlier ('... is starring
# Swoosie KurtzThe Rules of Attraction is starring Fred Savage'). A name written so repeats nothing
# ('YouTube', 'JavaScript', 'McDonald'). After a stop, a bracket or a quote it would be right too,
# but gains nothing on HaluEval, and a claim that drew on the glued pair then spans three sentences
# where windows hold two (instrumented traffic lost a supported answer and a caught one).
_GLUE = re.compile(
    r"""(?<=[a-z\d])(?=[A-Z][a-z])  # a capitalised word
    | (?<=[a-z])(?=\d)  # a number ('Championship2007 PGA Championship')
    | (?<=(?<!\d)(?:1\d|20)\d\d)(?=(?:1\d|20)\d\d(?!\d))  # a year after a year ('19071907 was the year')""",
    re.VERBOSE,
)
# What `_GLUE` needs, found faster: most sentences have none.
_GLUE_HINTS = tuple(re.compile(p).search for p in (r"[a-z\d][A-Z][a-z]", r"[a-z]\d", r"\d{8}"))
_SHORTEST_REPEAT = 4  # ('BonBon', 'CanCan' are words)
# How far `_repeats` reads around a cut: two words after it, and before it further than a triple's
# subject stands (at most 150 characters in HaluEval dialogue), so that text made of candidates
# ('xAb c' repeated, a base64 blob) costs linear time, not quadratic.
_AHEAD, _BEHIND = 100, 300
_word_char = re.compile(r"\w").fullmatch  # (None for '', before the start or past the end)


def _unglued(sentence: str) -> list[str]:
    """A sentence cut where statements are glued without a space (`_GLUE`)."""
    if not any(hint(sentence) for hint in _GLUE_HINTS):
        return [sentence]
    cuts = [m.start() for m in _GLUE.finditer(sentence) if _repeats(sentence, m.start())]
    if not cuts:
        return [sentence]
    pieces = (sentence[a:b].strip() for a, b in zip((0, *cuts), (*cuts, len(sentence)), strict=True))
    return [p for p in pieces if p]


def _repeats(text: str, at: int) -> bool:
    """Whether what starts at `at` repeats what came before (`_GLUE`)."""
    before, tokens = text[max(0, at - _BEHIND) : at], text[at : at + _AHEAD].split(maxsplit=2)
    first = tokens[0]
    if (
        len(first) >= _SHORTEST_REPEAT
        and before.endswith(first)
        and not _word_char(before[: -len(first)][-1:])
    ):
        return True
    return len(tokens) > 1 and _stands_in(" ".join(tokens[:2]), before)


def _stands_in(phrase: str, text: str) -> bool:
    """Whether `phrase` stands in `text` as whole words (`str.find`: no pattern compiled per phrase)."""
    at = text.find(phrase)
    while at >= 0:
        end = at + len(phrase)
        if not _word_char(text[at - 1 : at]) and not _word_char(text[end : end + 1]):
            return True
        at = text.find(phrase, at + 1)
    return False


def _hard_pieces(block: str) -> list[str]:
    pieces, start = [], 0
    for match in ml.HARD_STOP.finditer(block):
        pieces.append(block[start : match.end()])
        start = match.end()
    return [p for p in (*pieces, block[start:]) if p.strip()]


def _punkt(piece: str) -> list[str]:
    if not any(c in piece for c in ".!?"):
        return [piece.strip()]
    return _punkt_sentences(piece)


def _punkt_sentences(text: str) -> list[str]:
    """nupunkt's sentences (plain strings: tuples only when asked for spans), stripped, with glued
    stops split (`_GLUED_STOP`)."""
    found = nupunkt.sent_tokenize(text)
    return [g for s in found if isinstance(s, str) and s.strip() for g in _GLUED_STOP.split(s.strip())]


def _rejoin(found: list[str], *, titles: bool) -> list[str]:
    """Undo nupunkt's cuts after '20.' before a month and after a non-English abbreviation (or dotted
    initials) before a lower-case word or a digit; and, in text that is not ASCII, after a title
    before a name (English 'Sr.' ends sentences: 'Ross Bagdasarian, Sr. The films ...')."""
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


# An abbreviation of dotted initials in any language ('π.Χ.', 'т.е.', 'z.B.'): before a lower-case
# word it ends no sentence ('... 447 και 438 π.Χ. και ήταν αφιερωμένος ...').
_DOTTED = re.compile(r"(?:[^\W\d_]{1,3}\.)+[^\W\d_]{1,3}")


def _continues(word: str, sentence: str, titles: bool) -> bool:
    """Whether `sentence` continues the one that ended with `word` and a full stop."""
    head = sentence[:1]
    if word.isdigit():  # '20.' before 'Juli 1969'
        return len(word) <= 2 and ml.fold(sentence.split()[0].rstrip(".,")) in ml.MONTHS
    if (word in ml.ABBREVIATIONS or _DOTTED.fullmatch(word)) and (head.islower() or head.isdigit()):
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


@dataclass(frozen=True, slots=True)
class Window:
    """A span of consecutive sentences of one reference, pre-tokenised for matching."""

    node: int
    text: str
    stems: frozenset[str]
    single: bool  # one sentence (negation is compared sentence to sentence)
    parts: tuple[str, ...]  # texts whose quantities together are the window's (see `reads_apart`)
    sentences: tuple[str, ...]  # its sentences: (text,) for one, the two of a pair

    @property
    def quantities(self) -> tuple[Quantity, ...]:
        """Numbers, amounts and dates of the window (spans index into `text`). Read on first use and
        cached: a claim looks at its best window's only, so reading every window up front would
        double the cost of `windows` for nothing; a pair's are its sentences' (see `reads_apart`)."""
        return _quantities_of(self.parts)


@lru_cache(maxsize=4096)
def _quantities_of(parts: tuple[str, ...]) -> tuple[Quantity, ...]:
    """The quantities of the parts joined by spaces, each part read once (spans shifted)."""
    if len(parts) == 1:
        return quantities(parts[0])
    found: list[Quantity] = []
    offset = 0
    for part in parts:
        found += [replace(q, span=(q.span[0] + offset, q.span[1] + offset)) for q in quantities(part)]
        offset += len(part) + 1
    return tuple(found)


def windows(reference: str, node: int) -> tuple[Window, ...]:
    """Every sentence, then every pair of adjacent sentences (a claim may draw on both); single
    sentences come first so that a tie picks the tighter window (negation is judged on it)."""
    found = _windows(reference)
    if node == 0:
        return found
    # (`replace`: 4x slower)
    return tuple(Window(node, w.text, w.stems, w.single, w.parts, w.sentences) for w in found)


@lru_cache(maxsize=1024)  # per passage: ~10 KB each (docs/offline-judge.md, Memory)
def _windows(reference: str) -> tuple[Window, ...]:
    """The windows of a passage as node 0, tokenised once whatever its position: hallucination
    judges each passage alone after faithfulness judged them together."""
    sents = sentences(reference) or (reference,)
    singles = [Window(0, s, frozenset(stems_of(s)), True, (s,), (s,)) for s in sents]
    pairs = [_pair(a, b) for a, b in itertools.pairwise(singles)]
    return (*singles, *pairs)


def _pair(a: Window, b: Window) -> Window:
    text = f"{a.text} {b.text}"
    parts = (a.text, b.text) if reads_apart(a.text, b.text) else (text,)
    return Window(0, text, a.stems | b.stems, False, parts, (a.text, b.text))


@lru_cache(maxsize=1024)  # per passage: ~10 KB each (docs/offline-judge.md, Memory)
def passage_parts(reference: str) -> tuple[str, ...]:
    """The texts whose quantities together are the passage's: its sentences when it is them joined by
    spaces, each reading apart from the next, or by nothing (glued statements, cut apart); else the
    passage itself. A claim's quantities are then compared with each sentence's once, for the
    sentence, its pairs and the passage."""
    glued = glued_joins(reference)
    if not glued:  # (None, or a single sentence)
        return (reference,)
    sents = tuple(w.text for w in _windows(reference) if w.single)
    apart = all(g or reads_apart(a, b) for a, b, g in zip(sents, sents[1:], glued, strict=False))
    return sents if apart else (reference,)


def glued_joins(reference: str) -> tuple[bool, ...] | None:
    """Per pair of the passage's adjacent sentences, whether nothing joins them (statements glued
    without a space, cut by `_GLUE` or `_GLUED_STOP`) rather than a space; None when the passage is
    not its sentences so joined."""
    sents = [w.text for w in _windows(reference) if w.single]
    if " ".join(sents) == reference:  # (nearly every passage)
        return (False,) * (len(sents) - 1)
    glued, at = [], len(sents[0])
    if not reference.startswith(sents[0]):
        return None
    for sentence in sents[1:]:
        spaced = reference.startswith(" ", at)
        at += spaced
        if not reference.startswith(sentence, at):
            return None
        glued.append(not spaced)
        at += len(sentence)
    return tuple(glued) if at == len(reference) else None
