"""A bare 'Yes.' or 'No, it isn't.' to a yes/no question, read as the statement it makes.

'Is the Berlin office open on Sundays?' - 'No.' states that the Berlin office is not open on
Sundays; an LLM judge's claim extraction reads the answer with its question and checks exactly that.
Read alone, the reply states nothing and is unmeasured, so a 'Yes' where the passage says no could
never fail hallucination. `stance_statement` turns the question into that statement: the subject
moved before its auxiliary, 'not' after it for a no, the asker's 'I'/'my' made the answerer's
'you'/'your'.

Only where the reading is safe: a question opening with its auxiliary ('Is', 'Does', 'Can', ...),
not negated ('Isn't it open?' - 'No' is ambiguous), not about the answerer ('Have you read it?'
asks for the speaker's own state, no fact), and not joining or comparing two things ('Are X and Y
both American?', 'Is X bigger than Y?'): a 'No' there denies only that both are, and either answer
needs two facts put together, which no passage sentence states (on HaluEval QA, 60 right 'yes'
answers to such questions would have been judged unsupported).
"""

from __future__ import annotations

import re
from functools import lru_cache

from evaluators.offline.answer_words import WORDS
from evaluators.offline.sentences import sentences
from evaluators.offline.units import words_of

_YES, _NO = WORDS["yes"], WORDS["no"]
# What a bare reply may hold besides its stance: 'Yes, it is.', 'No, they don't.', 'Yes, of course.'
_ELLIPSIS = (
    WORDS["aux"]
    | WORDS["pronouns"]
    | _YES
    | _NO
    | frozenset(words_of("so that of course really cannot it's that's"))
)
_AUX = WORDS["aux"] - {w for w in WORDS["aux"] if w.endswith("n't")}
_DETERMINERS = WORDS["determiners"]
_SUBJECT_PRONOUNS = {"it": "it", "he": "he", "she": "she", "they": "they", "this": "this", "that": "that",
                     "there": "there", "i": "you", "we": "you"}  # fmt: skip
_PERSPECTIVE = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "we": "you",
    "us": "you",
    "our": "your",
}
# Where a subject ends: the predicate's first word ('open', 'built', 'the capital', 'in 1889').
_PREDICATE = (
    WORDS["prepositions"]
    | _DETERMINERS
    | frozenset(
        words_of("""still also ever really actually currently now always usually often never only already yet
        open closed allowed permitted available required free safe possible true able
        built made born held written known found given taken done seen sold run paid""")
    )
)
_INSIDE_NAMES = frozenset(words_of("of the a an in on for de du von van"))  # 'The Lord of the Rings'
_JOINED = frozenset(words_of("and or both either neither same than all any"))
_TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|[\w'’-]+|[^\w\s]")
_FILLER = re.compile(
    r"^(?:(?:so|and|but|also|ok|okay|hi|hey|hello|well|then|now|please)\b[\s,]*)+", re.IGNORECASE
)


def stance(sentence: str) -> bool | None:
    """True for a bare yes ('Yes.', 'Yes, it is.'), False for a bare no ('No, it doesn't.', 'Nope.'),
    None for anything that says more ('No, it is closed at weekends.')."""
    tokens = [t.lower().replace("’", "'") for t in _TOKEN.findall(sentence) if t[0].isalnum()]
    if not tokens or len(tokens) > 5 or any(t not in _ELLIPSIS and not t.endswith("n't") for t in tokens):
        return None
    if tokens[0] in _NO:
        return False
    return True if tokens[0] in _YES else None


@lru_cache(maxsize=1024)
def stance_statement(reply: str, question: str) -> str | None:
    """The statement a bare yes or no makes about the question it answers, or None."""
    said = stance(reply)
    asked = _last_question(question) if said is not None else None
    if asked is None:
        return None
    tokens = _TOKEN.findall(_FILLER.sub("", asked))
    if len(tokens) < 3 or tokens[0].lower() not in _AUX:
        return None
    aux, rest = tokens[0].lower(), tokens[1:]
    lowered = [t.lower() for t in rest]
    if "not" in lowered or lowered[0] == "you" or _JOINED & set(lowered):
        return None
    end = _subject_end(rest, aux in ("do", "does", "did"))
    if end is None:
        return None
    subject = [_SUBJECT_PRONOUNS[lowered[0]]] if _pronoun(rest) else rest[:end]
    predicate = [_PERSPECTIVE.get(t.lower(), t) for t in rest[end:]]
    if all(t.lower() in _ELLIPSIS or not t[0].isalnum() for t in predicate):
        return None  # 'Is that correct?': the proposition is in what came before
    words = [*subject, aux if said else "cannot" if aux == "can" else f"{aux} not", *predicate]
    text = re.sub(r"\s+([^\w\s'’(\[\"“])", r"\1", " ".join(words))
    return f"{text[0].upper()}{text[1:]}."


def _last_question(text: str) -> str | None:
    """The question a reply answers: the last sentence of the input, when it asks one."""
    said = sentences(text.strip())
    last = said[-1].strip() if said else ""
    return last.rstrip("?").strip() if last.endswith("?") else None


def _subject_end(tokens: list[str], verb_follows: bool) -> int | None:
    """Where the subject after a question's auxiliary ends, or None when no predicate follows it: a
    pronoun; names ('Christopher Nolan', 'The Lord of the Rings'); or an optional determiner, names and
    common nouns up to the predicate's first word ('the hotel pool | open', 'the Eiffel Tower | built').
    After 'do' the predicate is a verb, which no list can tell from a noun: one common noun is taken
    ('the plan | include', 'ibuprofen | cause')."""
    first = tokens[0].lower()
    if _pronoun(tokens):
        return 1
    i = 1 if first in _DETERMINERS else 0
    named = False
    while i < len(tokens) and (_upper(tokens, i) or (named and _name_goes_on(tokens, i))):
        i, named = i + 1, True
    if first in _DETERMINERS or not named:
        nouns = i
        while i < len(tokens) and _common_noun(tokens[i]) and not (verb_follows and i > nouns):
            i += 1
        while nouns < i < len(tokens) and (tokens[i][:1].isdigit() or _upper(tokens, i)):
            i += 1  # 'version 2.1', 'the band Saosin'
    return i if 0 < i < len(tokens) and tokens[i][0].isalnum() else None


def _pronoun(tokens: list[str]) -> bool:
    """A pronoun subject: not 'We' of a title ('Is We Were Liars in English?'), nor 'that' before a
    noun ('Is that album good?')."""
    first = tokens[0].lower()
    if first not in _SUBJECT_PRONOUNS or tokens[0] == "We":
        return False
    return first not in ("this", "that") or len(tokens) < 2 or not _common_noun(tokens[1])


def _upper(tokens: list[str], i: int) -> bool:
    return i < len(tokens) and tokens[i][:1].isupper()


def _name_goes_on(tokens: list[str], i: int) -> bool:
    """'Python 3.12', 'Bank of America': a number after a name, or little words before another one."""
    j = i
    while j < len(tokens) and tokens[j] in _INSIDE_NAMES:
        j += 1
    return tokens[i][:1].isdigit() or (j > i and _upper(tokens, j))


def _common_noun(token: str) -> bool:
    lowered = token.lower()
    return (
        token.isalpha()
        and token.islower()
        and lowered not in _PREDICATE
        and not lowered.endswith(("ed", "ly"))
    )
