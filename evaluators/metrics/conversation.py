"""Conversational metrics (deepeval's): knowledge retention, conversation relevancy and completeness.

deepeval judges each assistant turn in its own call (with the knowledge or the window of turns before
it written out again), so a 10-turn conversation costs 10+ calls and repeats the transcript in each.
Here the judge reads the numbered transcript once and gives one verdict per reply in ONE call: each
reply is an item named by its turn number, and the instruction says to judge it against the turns
before it. Judge calls per conversation: knowledge retention 1, relevancy 1, completeness 2 (the
user's intentions, then one verdict each).

The counting is deepeval's: only a "no" counts against a reply or an intention (an `idk` does not).
A judge that can answer none of it (the offline judge cannot judge conversations) leaves the score
`unmeasured`, with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Unpack

from evaluators import scores
from evaluators.case import CaseField, TestCase, Turn
from evaluators.judges.base import ExtractKind, Verdict, VerdictTask
from evaluators.judges.prompts import instruction_overrides
from evaluators.metrics.base import Metric, MetricOptions, Scored, listing, record, undecided
from evaluators.session import JudgeSession

# The instructions, one per question asked (easy to find, and overridable with a metric's `template`).
# Each completes the judge's "For each item answer ...".
_REPLIES = (
    ". REFERENCES hold a conversation, its turns numbered [1], [2], ...; each item is one assistant reply "
    "of it, named by its turn number: judge it only against the turns before it"
)
KNOWLEDGE_RETENTION_INSTRUCTION = (
    "no if the reply asks again for, ignores or contradicts information the user already gave, "
    "yes if it keeps what the user said" + _REPLIES
)
RELEVANCY_INSTRUCTION = (
    "yes if the reply is relevant and appropriate to what the user said in the last {window} turns "
    "before it, no if it is off-topic or does not respond to the user" + _REPLIES
)
INTENTIONS_INSTRUCTION = (
    "TEXT is what a user wrote over a conversation, one message per line. List the user's intentions "
    "(what they wanted to get or have done), each a short sentence starting 'The user wants'. Add nothing."
)
COMPLETENESS_INSTRUCTION = (
    "yes if the assistant satisfied the item (an intention of the user) by the end of the conversation "
    "in REFERENCES (its turns numbered), no if it did not"
)


def numbered(turns: Sequence[Turn]) -> str:
    return "\n".join(f"[{number}] {turn.role}: {turn.content}" for number, turn in enumerate(turns, 1))


def replies(turns: Sequence[Turn]) -> list[str]:
    """The assistant turns as items, named by their turn number in `numbered`."""
    return [
        f"[{number}] {turn.content}"
        for number, turn in enumerate(turns, 1)
        if turn.role == "assistant" and turn.content.strip()
    ]


def tallied(
    session: JudgeSession,
    items: list[str],
    verdicts: Sequence[Verdict],
    kind: str,
    check: str,
    kept: str,
    flagged: str,
) -> Scored:
    """The share of items not judged against (deepeval counts only a "no"), with a reason that names
    the count (`kept`) and the items against (`flagged`); all `idk` means nothing was judged."""
    if all(v.verdict == "idk" for v in verdicts):
        raise undecided(session, verdicts, "the judge could not decide")
    against = [item for item, v in zip(items, verdicts, strict=True) if v.verdict == "no"]
    reason = f"{len(items) - len(against)} of {len(items)} {kept}"
    if against:
        reason += f"; {flagged}: {listing(against)}"
    records = [record(kind, item, v, check) for item, v in zip(items, verdicts, strict=True)]
    return Scored((len(items) - len(against)) / len(items), reason, records)


class ConversationMetric(Metric):
    """A metric over a conversation's turns; its instructions apply unless the user's `template` sets them."""

    required_fields = (CaseField.TURNS,)
    judged_offline = False

    def instructions(self) -> dict[str, str]:
        """The judge instructions this metric asks with, by override key."""
        return {}

    def overrides(self) -> AbstractContextManager[None]:
        mine = {key: text for key, text in self.instructions().items() if key not in (self.template or {})}
        return instruction_overrides(mine)

    async def judge_replies(self, case: TestCase, session: JudgeSession) -> tuple[list[str], list[Verdict]]:
        turns = case.turns or []
        items = replies(turns)
        with self.overrides():
            verdicts = await session.verdicts(items, [numbered(turns)], VerdictTask.SATISFIES)
        return items, verdicts


class KnowledgeRetention(ConversationMetric):
    """Replies that keep what the user said before / replies (deepeval KnowledgeRetentionMetric)."""

    name = "knowledge_retention"

    def instructions(self) -> dict[str, str]:
        return {VerdictTask.SATISFIES.value: KNOWLEDGE_RETENTION_INSTRUCTION}

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        items, verdicts = await self.judge_replies(case, session)
        return tallied(
            session, items, verdicts, "reply", "retains", "replies keep what the user said before", "lapses"
        )


class ConversationRelevancy(ConversationMetric):
    """Replies relevant to the last `window_size` turns before them / replies (deepeval's metric)."""

    name = "conversation_relevancy"

    def __init__(self, *, window_size: int = 10, **options: Unpack[MetricOptions]) -> None:
        super().__init__(**options)
        if window_size < 1:
            raise ValueError("window_size must be at least 1")
        self.window_size = window_size

    def instructions(self) -> dict[str, str]:
        return {VerdictTask.SATISFIES.value: RELEVANCY_INSTRUCTION.format(window=self.window_size)}

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        items, verdicts = await self.judge_replies(case, session)
        kept = "replies are relevant to the conversation"
        return tallied(session, items, verdicts, "reply", "relevant", kept, "off the point")


class ConversationCompleteness(ConversationMetric):
    """User intentions the conversation satisfied / intentions (deepeval ConversationCompletenessMetric)."""

    name = "conversation_completeness"

    def instructions(self) -> dict[str, str]:
        return {
            ExtractKind.STATEMENTS.value: INTENTIONS_INSTRUCTION,
            VerdictTask.SATISFIES.value: COMPLETENESS_INSTRUCTION,
        }

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        turns = case.turns or []
        said = "\n".join(turn.content for turn in turns if turn.role == "user" and turn.content.strip())
        with self.overrides():
            intentions = await session.extract(said, ExtractKind.STATEMENTS)
            if not intentions:
                raise scores.UndefinedScoreError("the user expressed no intention to satisfy")
            verdicts = await session.verdicts(intentions, [numbered(turns)], VerdictTask.SATISFIES)
        kept = "user intentions satisfied"
        return tallied(session, intentions, verdicts, "intention", "satisfied", kept, "not satisfied")
