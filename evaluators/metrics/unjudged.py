"""Items the judge's reply held no verdict for: shown on the result, never counted in its score.

A weak judge model skips an item now and then (`judges.matching` places the verdicts it did give).
A metric that can score part of its items asks the session with `partial=True`, counts only the pairs
`judged` returns, and records every item, so the result lists the unjudged ones as `unmeasured`
(`record` in `metrics.base` writes them) at their own positions. The base then says in the reason
how many were judged and puts the replies' mismatches in the details, where the collector counts
them (`ragpulse_judge_reply_mismatches_total{metric}`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TypeVar

from evaluators.judges.base import ReplyMismatch, Verdict
from evaluators.judges.matching import MISMATCH_DETAIL, mismatch_summary
from evaluators.result import UNJUDGED, VerdictRecord

T = TypeVar("T")


def judged(items: Sequence[T], verdicts: Sequence[Verdict]) -> list[tuple[T, Verdict]]:
    """The items the judge gave a verdict for, each with it: what a score counts."""
    return [(item, verdict) for item, verdict in zip(items, verdicts, strict=True) if verdict.judged]


def unjudged_record(kind: str, item: str, check: str, source_ids: Sequence[int] = ()) -> VerdictRecord:
    return VerdictRecord(
        kind=kind,
        item=item,
        verdict=UNJUDGED,
        reason=f"the judge gave no verdict for this {kind}",
        check=check,
        source_ids=list(source_ids),
    )


def mismatch_details(noted: Sequence[ReplyMismatch]) -> dict[str, object]:
    """The details entry of a result whose judge replies did not line up (none when they all did)."""
    return {MISMATCH_DETAIL: mismatch_summary(noted)} if noted else {}


def mismatch_note(records: Sequence[VerdictRecord], noted: Sequence[ReplyMismatch]) -> str:
    """What the reason adds: "2 of 3 claims judged ...", and verdicts the reply held about no item."""
    kinds = Counter(record.kind for record in records)
    missing = Counter(record.kind for record in records if record.verdict == UNJUDGED)
    parts = [
        f"{kinds[kind] - count} of {kinds[kind]} {_plural(kind)} judged: the judge gave no verdict for "
        f"the other {count}"
        for kind, count in missing.items()
    ]
    ignored = sum(m.ignored for m in noted)
    if ignored:
        word = next(iter(kinds)) if len(kinds) == 1 else "item"
        parts.append(f"{ignored} verdict(s) in the judge's reply matched no {word} and were ignored")
    return "; ".join(parts)


def _plural(kind: str) -> str:
    return f"{kind[:-1]}ies" if kind.endswith("y") else f"{kind}s"
