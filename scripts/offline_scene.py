"""What a perturbation of a synthetic answer may look at, and the names in a text (training only).

A swap must put a person for a person and borrow from another document of the same split; an
addition must say something the context does not. `Scene` carries the context (pre-tokenised once)
and the material of other documents; `names_of` and `name_kind` find and coarsely type the names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from evaluators.offline.text import content_stems, entities, numbers
from scripts.offline_quantities import MONTHS, WEEKDAY

PERSON_KINDS = frozenset({"person"})


@dataclass(slots=True)
class Scene:
    """What a perturbation may look at: the context, and material from other documents."""

    context: str
    question: str
    names: list[tuple[str, str]]  # (name, kind) of this document
    others: dict[str, list[str]]  # kind -> names of other documents (same source and split)
    other_sentences: list[str] = field(default_factory=list)
    predicates: list[str] = field(default_factory=list)  # 'won the Booker Prize in 2002.'
    pairs: frozenset[frozenset[str]] = frozenset()  # names the context relates (dialogue facts)
    lowered: str = ""
    _stems: frozenset[str] | None = None
    _numbers: frozenset[str] | None = None

    def __post_init__(self) -> None:
        self.lowered = self.context.lower()

    @property
    def stems(self) -> frozenset[str]:
        """Content stems of the context (computed on first use: most answers never need them)."""
        if self._stems is None:
            self._stems = frozenset(content_stems(self.context))
        return self._stems

    @property
    def numbers(self) -> frozenset[str]:
        if self._numbers is None:
            self._numbers = frozenset(numbers(self.context))
        return self._numbers

    def fresh(self, text: str, base: str) -> bool:
        """The perturbed answer is new: changed, and not a sentence the context states."""
        return text != base and text.strip().lower() not in self.lowered

    def kind(self, name: str, sentence: str) -> str:
        return next((k for n, k in self.names if n == name), None) or name_kind(name, sentence)


_ORG = re.compile(
    r"\b(?:University|College|School|Company|Corporation|Inc|Ltd|Group|Party|Club|FC|United|City|Council"
    r"|Association|Agency|Bank|Airlines?|Army|Navy|Department|Ministry|Institute|Foundation|Hospital|Records"
    r"|Studios|Network|News|Times|Post|Police|Court|League|Commission|Committee|Service|Society)\b"
)
_THING = re.compile(
    r"\b(?:Cathedral|Church|Stadium|Park|Street|Road|Bridge|Museum|Theat(?:re|er)|Hall|Palace|Castle|Airport"
    r"|Station|Square|Tower|River|Lake|Mountain|Island|Valley|County|State|Province|Republic|Kingdom|Empire"
    r"|Award|Prize|Cup|Championship|Festival|Show|Series|Act|War|Day|Game|Album|Film|Novel|Book)s?\b"
)
_PERSON_BEFORE = re.compile(  # a title or a role right before a name: 'Mr', 'coach', 'striker'
    r"\b(?:mr|mrs|ms|dr|sir|dame|lord|lady|president|senator|judge|coach|manager|boss|striker|midfielder"
    r"|defender|goalkeeper|captain|player|actor|actress|singer|rapper|director|writer|author|minister"
    r"|officer|chief|executive|ceo|founder|chairman|spokesman|spokeswoman|star|son|daughter|wife|husband"
    r"|brother|sister|father|mother)\.?\s+$",
    re.IGNORECASE,
)
_PERSON_AFTER = re.compile(r"^(?:,\s+who\b|\s+(?:said|says|told|added|who|was born|died)\b|,\s+\d{1,2},)")
_PERSON_SHAPE = re.compile(r"^[A-Z][a-z'’.-]+(?: [A-Z][a-z'’.-]+){1,2}$")  # 'Jane Doe', 'Mary Ann Smith'

_NOT_NAMES = frozenset(
    """
    however meanwhile yesterday today tomorrow but and mr mrs ms dr sir he she it they we i the a an in
    on at this that these those there his her their its after before during when while although one
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_PLACE_CUE = frozenset({"in", "at", "from", "near", "across", "to"})


def name_kind(name: str, sentence: str) -> str:
    """A coarse type from the name and the words around it, so that a swap puts a person for a
    person: org, thing, place, person, 'the_name' (a team, a band: 'the Toronto Raptors'), an
    adjective ('American educator') or a bare name of one or more words."""
    if _ORG.search(name):
        return "org"
    if _THING.search(name):
        return "thing"
    at = max(0, sentence.find(name))
    before, after = sentence[:at], sentence[at + len(name) :]
    words = [w.lower() for w in before.split()[-2:]]
    if words and (words[-1] in _PLACE_CUE or (words[-1] == "the" and words[0] in _PLACE_CUE)):
        return "place"
    if words and words[-1] == "the":
        return "the_name"
    if " " not in name and re.search(r"(?:an|ese|ish|ch|i)$", name) and re.match(r"\s+[a-z]", after):
        return "adjective"
    if (_PERSON_BEFORE.search(before) or _PERSON_AFTER.match(after)) and _PERSON_SHAPE.match(name):
        return "person"
    return "name1" if " " not in name else "name2"


def _mid_sentence(name: str, text: str) -> bool:
    """`name` occurs capitalised where a sentence does not start: a name, not a capitalised word."""
    at = text.find(name)
    while at >= 0:
        if at > 0 and text[max(0, at - 2) : at].strip() not in {".", "!", "?", '"', ""}:
            return True
        at = text.find(name, at + 1)
    return False


def names_of(text: str, context: str = "") -> list[str]:
    """Capitalised names of a text, without months, weekdays and sentence-opening words; a single
    word counts only when the text (or the context) also has it mid-sentence ('Half of...' is no name)."""
    return list(_names_of(text, context))


@lru_cache(maxsize=8192)
def _names_of(text: str, context: str) -> tuple[str, ...]:
    out = []
    for name in entities(text):
        first = name.split()[0].lower()
        if (
            len(name) < 3
            or first in _NOT_NAMES
            or name in MONTHS
            or WEEKDAY.fullmatch(name)
            or " and " in name
        ):
            continue
        if " " in name or _mid_sentence(name, text) or _mid_sentence(name, context):
            out.append(name)
    return tuple(out)
