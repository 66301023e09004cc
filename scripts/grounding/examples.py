"""The one shape every labelled set is read into: a claim (or a whole answer) and its passages.

Labels: `supported`, `unsupported` (not stated), `contradicted`, or `not_supported` where a set only
says "not supported" (either of the last two).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

LABELS = ("supported", "unsupported", "contradicted", "not_supported")


@dataclass(frozen=True, slots=True)
class Example:
    """One claim (or a whole answer, `answer_level`) against the passages that should ground it."""

    source: str
    group: str
    passages: tuple[str, ...]
    claim: str
    label: str
    question: str = ""
    item: str = ""  # the id that keeps one document's examples on one side of a split
    answer_level: bool = False  # the claim is a whole answer: judged claim by claim, as in production

    @property
    def supported(self) -> int:
        return int(self.label == "supported")

    def fold(self, share: int = 5) -> int:
        """A stable fold of the item (the document), so its claims never straddle train and test."""
        return zlib.crc32(f"{self.source}:{self.item or self.claim}".encode()) % share
