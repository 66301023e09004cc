"""The claims of an answer, as the offline judge checks them: factual clauses, tastes reduced to names.

Every grounding operation starts here (faithfulness per claim, hallucination per claim and context,
the training script per HaluEval answer), so the split is one function, cached by the answer's text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from evaluators.citations_parse import without_citations
from evaluators.offline.idf import default_idf
from evaluators.offline.sentences import clauses, sentences
from evaluators.offline.text import entities, is_factual

_OPINION = re.compile(
    r"^(?:(?:yes|yeah|yep|no|nope|ok|okay|oh|well|sure|absolutely|definitely|then|so|and|but|"
    r"great|cool|awesome|wow)\b[\s,!.]*)*"
    r"(?:(?:i|we)(?:'m|'ve| am| have| do| really| also| too| just| personally)*\s+"
    r"(?:like|love|enjoy|prefer|adore|hate|dislike|am a (?:big )?fan|'m a (?:big )?fan|agree|hope)\b"
    r"|you(?:'ll|'d| will| would| might| may| should| could)?(?: really| also| definitely)?\s+"
    r"(?:love|like|enjoy|want to (?:check|see|watch|read|try))\b)",
    re.IGNORECASE,
)

# 'Did you know that X?' asserts X: a chat reply's way to add a fact ('Do you know who ...?' asks).
_ASSERTING_QUESTION = re.compile(
    r"^(?:(?:so|and|but|oh|also)\b[,\s]*)*(?:did|do) you know,?(?: that)?\s+"
    r"(?!(?:who|what|when|where|why|how|which|whether|if|about|of)\b)(?P<fact>.+?)\s*\?+$",
    re.IGNORECASE,
)


def answer_claims(text: str) -> list[str]:
    """Claims of an answer: its factual sentences (and what 'Did you know that ...?' asserts), split
    into clauses where they join facts, without citation markers.

    A taste ('I love crime fiction', 'you'll love X') is not a fact to ground, but what it names
    must exist: such a clause is reduced to its names ('X'), or dropped when it names nothing."""
    return list(_answer_claims(text))


@lru_cache(maxsize=1024)
def _answer_claims(answer: str) -> tuple[str, ...]:
    """Cached by the text as given: hallucination splits each claim again for every passage."""
    text = without_citations(answer)
    claims: list[str] = []
    stated = (_asserted(s) for s in sentences(text))
    for clause in (c for s in stated if is_factual(s) for c in clauses(s) if is_factual(c)):
        opinion = _OPINION.match(clause)
        if opinion:
            claims.extend(entities(clause[opinion.end() :], common=default_idf().common))
        else:
            claims.append(clause)
    return tuple(claims)


def _asserted(sentence: str) -> str:
    """A sentence, or the statement a rhetorical question makes ('Did you know that X?' -> 'X.')."""
    asked = _ASSERTING_QUESTION.match(sentence.strip())
    if asked is None:
        return sentence
    fact = asked["fact"]
    return f"{fact[0].upper()}{fact[1:]}."
