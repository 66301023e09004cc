"""Which verdict of a judge's reply is about which item: each is placed by what it echoes.

Weak judge models miscount: they skip an item, judge one twice, or answer in their own order. Placed
by position, such a reply is silently wrong (after a skipped item every verdict lands on the next
one); refused for its length, it fails the whole metric. So each verdict echoes its item's 0-based
index (the schema asks for it) or its text, and `place` puts it on the item it names. Items left
without a verdict get a placeholder that no score counts (`Verdict.judged` False); verdicts that name
no item are ignored. The reply's `ReplyMismatch` rides on its verdicts; each metric that uses them
notes it (`note_mismatch`, in its own context), so its result, and the collector's
`ragpulse_judge_reply_mismatches_total{metric}`, count it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from evaluators.judges.base import JudgeError, ReplyMismatch, ReplyMismatchError, Verdict, VerdictCheck
from evaluators.judges.replies import InvalidReplyError
from evaluators.judges.schemas import ChecksReply, VerdictReply, VerdictsReply

MISMATCH_DETAIL = "judge_reply_mismatch"  # the `MetricResult.details` key of a metric's mismatches


@dataclass(frozen=True, slots=True)
class Placement:
    """Per item, the reply entry placed on it (None: no verdict for it), and what did not line up."""

    entries: list[int | None]
    mismatch: ReplyMismatch | None

    def problem(self) -> str | None:
        """What the repair turn tells the judge; None when every item has exactly one verdict."""
        mismatch = self.mismatch
        if mismatch is None or not (mismatch.unjudged or mismatch.ignored):
            return None
        parts = []
        if mismatch.judged == 0:
            parts.append(f"no verdict matched any of the {mismatch.items} items asked about")
        elif mismatch.unjudged:
            parts.append(f"no verdict for item {', '.join(map(str, mismatch.unjudged[:10]))}")
        if mismatch.ignored:
            parts.append(f"{mismatch.ignored} verdict entries placed on no item")
        return f"{'; '.join(parts)}: give each item of ITEMS exactly one, with its 0-based index"


def place(
    items: Sequence[str], echoes: Sequence[tuple[int, str]], usable: Sequence[bool] | None = None
) -> Placement:
    """Put each reply entry, given as (echoed index or -1, echoed text or ""), on its item.

    The echoed text wins (compared case- and space-insensitively), then the index; an entry that
    echoes neither takes its position, but only in a list exactly as long as the items (as any reply
    was read before). Indexes exactly 1..n in a full list were meant 1-based. An entry that is not
    `usable` (the caller's say: a wrong number of verdicts inside it) is ignored.
    """
    n = len(items)
    full = len(echoes) == n
    shift = 1 if full and n and sorted(index for index, _ in echoes) == list(range(1, n + 1)) else 0
    by_text: dict[str, list[int]] = {}
    for position, item in enumerate(items):
        by_text.setdefault(_normal(item), []).append(position)
    entries: list[int | None] = [None] * n
    placed: list[int] = []  # item positions, in reply order
    ignored = 0
    for e, (index, text) in enumerate(echoes):
        if usable is not None and not usable[e]:
            ignored += 1
            continue
        slot = next((p for p in by_text.get(_normal(text), ()) if entries[p] is None), None) if text else None
        if slot is None:
            wanted = index - shift if index >= 0 else (e if full else -1)
            slot = wanted if 0 <= wanted < n and entries[wanted] is None else None
        if slot is None:
            ignored += 1
        else:
            entries[slot] = e
            placed.append(slot)
    unjudged = tuple(p for p, entry in enumerate(entries) if entry is None)
    reordered = placed != sorted(placed)
    if not (unjudged or ignored or reordered):
        return Placement(entries, None)
    return Placement(entries, ReplyMismatch(n, unjudged, ignored, reordered))


@dataclass(frozen=True, slots=True)
class Matcher:
    """Places the verdicts of one reply on `items`: a `verdicts` reply, or with `checks` (how many) a
    `verdicts_multi` one, whose item entries each hold one verdict per check. Its `check` and
    `usable` drive the transport's repair turn; `error` and the verdict lists read the outcome."""

    items: Sequence[str]
    checks: int | None = None

    def placement(self, reply: VerdictsReply | ChecksReply) -> Placement:
        if isinstance(reply, VerdictsReply):
            return place(self.items, [(v.index, v.item) for v in reply.verdicts])
        usable = [len(entry.verdicts) == self.checks for entry in reply.items]  # else: which is which?
        return place(self.items, [(entry.index, entry.item) for entry in reply.items], usable)

    def check(self, reply: VerdictsReply | ChecksReply) -> str | None:
        problem = self.placement(reply).problem()
        if problem is None or isinstance(reply, VerdictsReply):
            return problem
        wrong = [
            f"entry {i} has {len(e.verdicts)}"
            for i, e in enumerate(reply.items)
            if len(e.verdicts) != self.checks
        ]
        return f"{problem}; {self.checks} verdicts per item, but {', '.join(wrong)}" if wrong else problem

    def usable(self, reply: VerdictsReply | ChecksReply) -> bool:
        """Something can be scored: at least one item got its verdict(s)."""
        mismatch = self.placement(reply).mismatch
        return mismatch is None or mismatch.judged > 0

    def error(self, error: InvalidReplyError) -> JudgeError:
        """A reply refused after its repair: a `ReplyMismatchError` when it parsed but placed no verdict
        (so the mismatch is counted like a partial one), else the error as it is."""
        value = error.value
        mismatch = self.placement(value).mismatch if isinstance(value, VerdictsReply | ChecksReply) else None
        return error if mismatch is None else ReplyMismatchError(str(error), mismatch)

    def verdicts(self, reply: VerdictsReply, n_references: int) -> list[Verdict]:
        """One verdict per item, a placeholder where the reply held none."""
        placement = self.placement(reply)
        return [
            unjudged(placement.mismatch)
            if e is None
            else to_verdict(reply.verdicts[e], n_references, placement.mismatch)
            for e in placement.entries
        ]

    def check_verdicts(self, reply: ChecksReply, checks: Sequence[VerdictCheck]) -> list[list[Verdict]]:
        """For each check, one verdict per item (result[check][item]), placeholders where none."""
        placement = self.placement(reply)
        return [
            [
                unjudged(placement.mismatch)
                if e is None
                else to_verdict(reply.items[e].verdicts[c], len(references), placement.mismatch)
                for e in placement.entries
            ]
            for c, (references, _task) in enumerate(checks)
        ]


def to_verdict(reply: VerdictReply, n_references: int, mismatch: ReplyMismatch | None = None) -> Verdict:
    ids = tuple(sorted({i for i in reply.ids if 0 <= i < n_references}))
    return Verdict(verdict=reply.verdict, reason=reply.reason.strip(), supporting_ids=ids, mismatch=mismatch)


def unjudged(mismatch: ReplyMismatch | None) -> Verdict:
    return Verdict("idk", "the judge gave no verdict for this item", judged=False, mismatch=mismatch)


def reply_mismatch(verdicts: Sequence[Verdict]) -> ReplyMismatch | None:
    return next((v.mismatch for v in verdicts if v.mismatch is not None), None)


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


# --- what each metric notes of the replies it used ------------------------------------------------
_noted: ContextVar[list[ReplyMismatch] | None] = ContextVar("evaluators_reply_mismatches", default=None)


@contextmanager
def mismatch_scope() -> Iterator[list[ReplyMismatch]]:
    """Collect the mismatches of the replies used inside this block (one metric's scoring)."""
    noted: list[ReplyMismatch] = []
    token = _noted.set(noted)
    try:
        yield noted
    finally:
        _noted.reset(token)


def note_mismatch(mismatch: ReplyMismatch) -> None:
    noted = _noted.get()
    if noted is not None:
        noted.append(mismatch)


def mismatch_summary(noted: Sequence[ReplyMismatch]) -> dict[str, int | bool]:
    """What a result's details say of its replies that did not line up."""
    return {
        "replies": len(noted),
        "unjudged": sum(len(m.unjudged) for m in noted),
        "ignored": sum(m.ignored for m in noted),
        "reordered": any(m.reordered for m in noted),
    }
