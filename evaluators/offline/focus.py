"""The clause of a passage sentence that a claim is about, where polarity and names are compared.

A sentence often joins facts: 'Shipping costs are not refundable, except when the item was not
the one ordered' holds two negations (even parity) though its first clause plainly says no;
'Armstrong and Aldrin walked on the surface while Collins remained in orbit' names Aldrin, yet
not as the one who remained in orbit. Comparing a claim with the clause it matches, rather than
the whole sentence, catches 'Shipping costs are always refundable' and 'Aldrin remained in orbit'.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from evaluators.offline.sentences import CONJUNCTIONS
from evaluators.offline.text import content_stems

_PART_BREAK = re.compile(
    rf"[,;]\s+(?=(?:{CONJUNCTIONS}|except|unless)\b)|\s+(?=(?:while|whereas)\s)",
    re.IGNORECASE,
)
_SHARE = 0.9  # the clause must hold this share of what the whole sentence matches of the claim


@lru_cache(maxsize=4096)
def _parts(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    found = [p.strip() for p in _PART_BREAK.split(text) if p.strip()]
    return tuple((p, frozenset(content_stems(p))) for p in found) if len(found) > 1 else ()


def focus(
    sentence: str,
    sentence_stems: frozenset[str],
    stems: Sequence[str],
    weights: Sequence[float],
    names: frozenset[str],
) -> str | None:
    """The clause of `sentence` (whose content stems are `sentence_stems`) that matches the claim's
    words (its names left out) almost as well as the whole sentence does; None for a one-clause
    sentence or a claim that spans clauses."""
    parts = _parts(sentence)
    if not parts:
        return None
    kept = [(s, w) for s, w in zip(stems, weights, strict=True) if s not in names]
    whole = sum(w for s, w in kept if s in sentence_stems)
    if whole <= 0.0:
        return None
    text, best = max(((t, sum(w for s, w in kept if s in pool)) for t, pool in parts), key=lambda p: p[1])
    return text if best >= _SHARE * whole else None
