"""Where a name stands in a sentence: the content words next to it. A name swap needs a rival, another
name standing where the claim's name stands ('Saturn is the largest' against 'Jupiter is the
largest': both beside 'largest'; 'directed by Y' against 'Z directed it': both beside 'directed').
A summary's name drawn from another sentence has none: in 'Asabi Barner, 37, of South Carolina got
a tattoo at Black Ink', against 'Barner, 37, is suing Black Ink tattoo parlor in Harlem', Harlem
stands by 'parlor', not by '37' or 'got'. Read by `features.GroundingFeaturizer.evidence`."""

from __future__ import annotations

import re
from functools import lru_cache

from evaluators.offline.passage_match import window_names
from evaluators.offline.polarity import stated
from evaluators.offline.text import entities, stems_of

NEIGHBOURS = 1  # content words on each side: more reach into the other facts a summary joins
_CLAUSE_END = re.compile(r"[.;:!?()]\s|\s[-–—]\s")


def swapped_names(names: list[str], missing: tuple[str, ...], best: str) -> list[str]:
    """Names of the claim found in the references but not in its best window (or clause). Asked only
    when that window names someone else: a window naming nobody is just a coreference ('The tower is
    330 metres tall'). A name inflected there ('Транссибирской' for 'Транссибирская') is there: its
    stems are, in a row. (Only in a row: 'Mangalia University' is no name of 'born in Mangalia ... at
    Ovidius University'.) A swap needs a rival as well (`rivalled`)."""
    return [e for e in names if e not in missing and not stated(e, best)]


def others(claim: str, text: str, common: frozenset[str]) -> tuple[str, ...]:
    """The names `text` gives and the claim does not, lower-cased: the candidates for a swap's rival."""
    lowered = claim.lower()
    return tuple(n for n in window_names(text, common) if n not in lowered)


def rivalled(claim: str, swapped: list[str], text: str, common: frozenset[str]) -> bool:
    """Whether `text` names someone else where the claim names one of `swapped` (`has_rival`)."""
    names = (*window_names(text, common), *swapped, *entities(claim, common=common))
    rivals = others(claim, text, common)
    return any(has_rival(claim, name, text, rivals, names) for name in swapped)


def has_rival(claim: str, name: str, text: str, rivals: tuple[str, ...], names: tuple[str, ...]) -> bool:
    """Whether one of `rivals` (names `text` gives and the claim does not, lower-cased) stands beside a
    word that stands beside `name` in the claim. Where `text` lacks those words, the slot cannot be
    found (the claim's fragment 'held in Hempstead' against 'took place ... in Uniondale'): any rival
    counts. `names`: every name of both sides, whose words are no neighbours."""
    skip = frozenset(s for n in names for s in stems_of(n))
    beside = neighbours(claim, name.lower(), skip)
    if beside.isdisjoint(stems_of(text)):
        return bool(rivals)
    return any(beside & neighbours(text, rival, skip) for rival in rivals)


@lru_cache(maxsize=4096)
def neighbours(text: str, name: str, skip: frozenset[str]) -> frozenset[str]:
    """The nearest content stems not in `skip` on each side of each place `text` gives `name`
    (lower-cased), within its clause."""
    lowered = text.lower()
    found: set[str] = set()
    for at in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", lowered):  # ('uk', not in 'Ukraine')
        before = _CLAUSE_END.split(lowered[: at.start()])[-1]
        after = _CLAUSE_END.split(lowered[at.end() :])[0]
        found.update([s for s in stems_of(before) if s not in skip][-NEIGHBOURS:])
        found.update([s for s in stems_of(after) if s not in skip][:NEIGHBOURS])
    return frozenset(found)
