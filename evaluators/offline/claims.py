"""The claims of an answer, as the offline judge checks them: factual clauses, tastes reduced to names.

What the speaker says of itself is no fact of the world: 'I highly recommend it', 'I really liked
X' (X must exist: its names stay), 'I think X' (X is the claim), 'I'm not sure.' (none; 'I'm not sure
about X' is an abstention, which the judge checks against the context), the 'No,' of a reply, and
praise ('It's an excellent book.': names aside, nothing to check).

Every grounding operation starts here (faithfulness per claim, hallucination per claim and context,
the training script per HaluEval answer), so the split is one function, cached by the answer's text
(and the question, which a bare 'Yes.' needs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from evaluators.citations_parse import without_citations
from evaluators.offline.idf import default_idf
from evaluators.offline.lexicon import abstention_topic
from evaluators.offline.sentences import clauses, sentences
from evaluators.offline.stance import stance_statement
from evaluators.offline.text import entities, is_factual, stems_of

_OPENER = r"^(?:(?:yes|yeah|yea|yep|yup|no|nope|ok|okay|oh|well|sure|absolutely|definitely|then|so|and|but|great|cool|awesome|wow)\b[\s,!.]*)*"  # noqa: E501
_ADVERBS = r"(?:'m|'ve|'d| am| have| do| would| really| also| too| just| personally| highly| strongly| totally| truly| definitely)*"  # noqa: E501
_OPINION = re.compile(
    _OPENER + rf"(?:(?:i|we){_ADVERBS}\s+"
    r"(?:lik|lov|enjoy|prefer|ador|hat|dislik|agree)(?:e|es|ed|d|s|red)?\b"
    rf"|i{_ADVERBS}\s+(?:recommend|suggest)(?:ed)?\b"  # a personal taste ('we recommend' may be policy)
    r"|(?:i|we)(?:'m| am| are| was| were)(?: (?:a|big|huge|really|totally|also))* (?:fan|fans|into)\b"
    r"|(?:i|we) hope\b"
    r"|you(?:'ll|'d| will| would| might| may| should| could)?(?: really| also| definitely)?\s+"
    r"(?:love|like|enjoy|want to (?:check|see|watch|read|try))\b)",
    re.IGNORECASE,
)
# 'I think X' asserts X, hedged, and 'I heard that X', 'I found that X' report it: X is the claim.
_HEDGE = re.compile(
    _OPENER + r"(?:i|we)(?:'ve|’ve|'d|’d| have| really| also| do| can| could| would)? "
    r"(?:(?:think|believe|guess|suppose|reckon|heard|hear|say)(?! of\b| about\b)(?: that)?"
    r"|(?:read|know|remember|recall|understand|learned|learnt|found|find|see|saw|noticed|notice|note"
    r"|confirm|tell you) that)\s+",
    re.I,
)
# 'I don't follow the Saints much', 'I have tickets', 'I'm sorry, ...': the speaker speaks of itself,
# not of the world; its names stay. ('We offer free returns' may be a company's policy: it stays.)
_FIRST_PERSON = re.compile(_OPENER + r"i(?:'m|’m|'ve|’ve|'d|’d|'ll|’ll)?\s", re.I)
# 'Let me know if you need anything else.', 'Feel free to contact us.', 'You should check it out!',
# 'Enjoy the read!': courtesy, and advice on what the answer already named, addressed to the reader: no
# fact of the world (its names stay). An instruction is a fact the context must support ('You should
# check the Billing tab', 'Enjoy free shipping on all orders'), and so is a number, address or link
# ('Feel free to contact us at 555-0100'): those stay. (A sentence of filler words alone, 'Thanks!',
# 'Enjoy!', is no claim already: `text.is_factual`. These carry words that are no filler elsewhere.)
_COURTESY = re.compile(
    _OPENER + r"(?:please\s+)?(?:let (?:me|us) know\b|thanks\b(?! to)|thank you\b|happy to help\b"
    r"|(?:feel free|(?:don't|do not) hesitate) to (?:contact|reach|ask|get in touch|let|write|message)\b"
    r"|(?:it was |it's |it is )?(?:my|our) pleasure\b|(?:i'm |i am |we're |we are |so )?glad\b"
    r"|enjoy(?: (?:it|them|reading|watching|listening|the \w+|your \w+))?[\s!.]*$"
    r"|have a (?:great|good|nice|wonderful|lovely) (?:day|evening|night|weekend|time)\b"
    r"|hope (?:you|this|that)\b"
    r"|(?:you(?: should| must| have to|'ve got to)(?: really| definitely| totally| also)* )?"
    r"(?:check (?:it|them|that|this|those) out"
    r"|give (?:it|them|that|this) a (?:try|watch|read|listen|go|shot))\b)",
    re.IGNORECASE,
)
_CHECKABLE = re.compile(r"\d|@|https?:|www\.")
_SPLICE = re.compile(r",\s+(?=(?:it|he|she|they|this|that)\s)", re.IGNORECASE)  # ', it falls under ...'

# 'I'm not sure.', 'I don't know.': the speaker's state, no fact (with a topic it is an abstention).
_UNSURE = re.compile(
    _OPENER
    + r"(?:i|we)(?:'m|’m| am| are| do| did)?(?: not|n't|n’t) (?:(?:quite|really|exactly|entirely|too) )?"
    r"(?:sure|certain|know)(?: about (?:that|it|this))?[\s.!]*$",
    re.IGNORECASE,
)

_OPENING = re.compile(_OPENER, re.IGNORECASE)

# 'It's an excellent book.', 'He is a great all around actor.': a judgement of value, no fact to
# ground. A clause is one when it has a word of praise or blame and every other content word is an
# intensifier or a generic noun. Its names still stand, as a taste's do ('a fun movie, like Finding
# Nemo': Finding Nemo must exist).
_PRAISE = frozenset(
    stems_of(
        """good great excellent amazing awesome wonderful fantastic brilliant terrific superb nice lovely
        cool fun enjoyable entertaining interesting beautiful incredible favorite favourite catchy
        overrated underrated boring bad terrible awful horrible"""
    )
)
_PRAISED = frozenset(  # (by content stem, as `_evaluates` reads a clause: stopwords are never there)
    stems_of(
        """really quite pretty truly super extremely incredibly especially definitely absolutely book
        movie film song show series one actor actress singer player story read watch choice option pick
        idea album music game work role performance writer author director team guy"""
    )
)

# 'No, X isn't in it.', 'Yeah he did': the reply's stance on the question, not a negation of the
# clause after it (counted as one, it would cancel the clause's own 'not', and flip 'No, it is closed
# at weekends').
_REPLY = re.compile(
    r"^(?:(?:yes|yeah|yep|yup|nope)\b[\s,!;:—–]*|(?:no|okay|ok|oh|sure)\s*[,!;:—–]\s*)+(?=\w)", re.IGNORECASE
)

# 'Did you know that X?' asserts X: a chat reply's way to add a fact ('Do you know who ...?' asks).
_ASSERTING_QUESTION = re.compile(
    r"^(?:(?:so|and|but|oh|also)\b[,\s]*)*(?:did|do) you know,?(?: that)?\s+"
    r"(?!(?:who|what|when|where|why|how|which|whether|if|about|of)\b)(?P<fact>.+?)\s*\?+$",
    re.IGNORECASE,
)


def answer_claims(text: str, question: str = "") -> list[str]:
    """Claims of an answer: its factual sentences (and what 'Did you know that ...?' asserts), split
    into clauses where they join facts, without citation markers; a bare 'Yes.' or 'No, it isn't.'
    opening the answer to a yes/no question is the statement it makes (`stance_statement`).

    A taste ('I love crime fiction', 'you'll love X') is not a fact to ground, but what it names
    must exist: such a clause is reduced to its names ('X'), or dropped when it names nothing."""
    return [claim for claim, _ in _answer_claims(text, question)]


def claims_with_questions(text: str, question: str) -> list[tuple[str, str]]:
    """`answer_claims`, each with the question it is judged with: `question`, except for the statement
    a bare reply makes, which restates it by design (judged with it, its words would all be neutral)."""
    return list(_answer_claims(text, question))


@lru_cache(maxsize=1024)
def _answer_claims(answer: str, question: str) -> tuple[tuple[str, str], ...]:
    """Cached by the text as given: hallucination splits each claim again for every passage."""
    said = sentences(without_citations(answer))
    replied = stance_statement(said[0], question) if said and question else None
    if not replied:
        return tuple((claim, question) for claim in _stated_claims(_asserted(s) for s in said))
    rest = _stated_claims(_asserted(s) for s in said[1:])
    return ((replied, ""), *((claim, "" if claim == replied else question) for claim in rest))


def _stated_claims(stated: Iterable[str]) -> list[str]:
    """The claims of the answer's sentences: factual clauses, what speakers say of themselves aside."""
    claims: list[str] = []
    for clause in (c for s in stated if is_factual(s) for c in clauses(s) if is_factual(c)):
        opinion, hedge = _OPINION.match(clause), _HEDGE.match(clause)
        if opinion:
            claims.extend(_names(clause[opinion.end() :]))
        elif _COURTESY.match(clause) and not _CHECKABLE.search(clause):
            courtesy, *spliced = _SPLICE.split(clause, maxsplit=1)  # (a fact spliced on stays)
            claims.extend(_names(courtesy) + _stated_claims(_capitalised(fact) for fact in spliced))
        elif _evaluates(clause):
            claims.extend(_names(clause))
        elif hedge and is_factual(clause[hedge.end() :]):
            reported = _capitalised(clause[hedge.end() :])
            claims.extend(_names(reported) if _evaluates(reported) else [reported])
        elif _FIRST_PERSON.match(clause) and abstention_topic(clause) is None:
            claims.extend(_names(clause))
        elif not _UNSURE.match(clause):
            reply = _REPLY.match(clause)
            claims.append(_capitalised(clause[reply.end() :]) if reply else clause)
    return claims


def _names(text: str) -> list[str]:
    """What a clause that states no fact still presupposes: its names exist."""
    return entities(text, common=default_idf().common)


def _evaluates(clause: str) -> bool:
    """Whether a clause only judges value ('Those are great songs.'), names aside."""
    judged = _OPENING.sub("", clause)
    said = set(stems_of(judged))
    if not said & _PRAISE:  # (most clauses: no need to read their names)
        return False
    said -= {p for name in _names(judged) for p in stems_of(name)}
    return bool(said & _PRAISE) and said <= _PRAISE | _PRAISED


def _capitalised(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}"


def _asserted(sentence: str) -> str:
    """A sentence, or the statement a rhetorical question makes ('Did you know that X?' -> 'X.')."""
    asked = _ASSERTING_QUESTION.match(sentence.strip())
    if asked is None:
        return sentence
    return f"{_capitalised(asked['fact'])}."
