"""Conversations: the turns of one conversation id, gathered until it goes quiet, then judged as one case.

deepeval and ragas judge a conversation as a whole (did the assistant keep what the user said? did it
do what the user wanted?), and a live service never says that a conversation ended: it stops. So each
record that carries a conversation id (OpenInference `session.id`, GenAI `gen_ai.conversation.id`,
OpenLLMetry's `traceloop.association.properties.session_id`) is also kept here as a turn, and when no
new turn came for `idle_s` the conversation goes to the evaluate stage as one more job, whose record is
its last turn: labels, exemplar and evaluation span go to the last trace.

Bounded: at most `max_open` conversations (past it, the least recently active one is judged early)
and the last `max_turns` turns of each. In memory only: each turn's own record is acknowledged as
usual (holding Kafka offsets for minutes would stall every partition), so a conversation open when the
process dies is judged from the turns it receives after the restart. A graceful shutdown judges every
open conversation.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from collector.records import RagRecord


class ConversationConfig(BaseModel):
    """When a conversation counts as over, and how much of them is kept (used when a conversational
    metric such as `knowledge_retention` is listed in `sampling.metrics`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    idle_s: float = Field(
        300.0, gt=0, description="A conversation with no new turn for this long is judged (then forgotten)."
    )
    max_open: int = Field(
        10_000, ge=1, description="Conversations held at once; past it, the least recently active is judged."
    )
    max_turns: int = Field(50, ge=2, description="The last turns (RAG records) kept per conversation.")


@dataclass(slots=True)
class _Open:
    turns: deque[RagRecord]
    last_seen: float
    seen: set[tuple[str, str]] = field(default_factory=set)  # (trace, span): a redelivered turn is one turn


class ConversationTracker:
    """Not thread-safe: lives on the pipeline's event loop, like the assembler."""

    def __init__(self, config: ConversationConfig) -> None:
        self.config = config
        self._open: OrderedDict[str, _Open] = OrderedDict()  # least recently active first

    def __len__(self) -> int:
        return len(self._open)

    def add(self, record: RagRecord, now: float) -> list[tuple[RagRecord, ...]]:
        """Keep `record` as a turn of its conversation; returns the conversations closed early to make
        room (judge them now). A record without a conversation id is no turn."""
        key = record.conversation_id
        if not key:
            return []
        conversation = self._open.pop(key, None)
        if conversation is None:
            conversation = _Open(deque(maxlen=self.config.max_turns), now)
        conversation.last_seen = now
        turn_key = (record.trace_id, record.anchor_span_id)
        if turn_key not in conversation.seen:
            conversation.seen.add(turn_key)
            conversation.turns.append(record)
        self._open[key] = conversation
        closed = []
        while len(self._open) > self.config.max_open:
            _, oldest = self._open.popitem(last=False)
            closed.append(_in_order(oldest))
        return closed

    def quiet(self, now: float) -> list[tuple[RagRecord, ...]]:
        """The conversations idle for `idle_s` or more, removed: each is judged once per quiet spell."""
        closed = []
        while self._open:
            key, conversation = next(iter(self._open.items()))
            if now - conversation.last_seen < self.config.idle_s:
                break
            del self._open[key]
            closed.append(_in_order(conversation))
        return closed

    def drain(self) -> list[tuple[RagRecord, ...]]:
        """Every open conversation (at shutdown)."""
        closed = [_in_order(conversation) for conversation in self._open.values()]
        self._open.clear()
        return closed


def _in_order(conversation: _Open) -> tuple[RagRecord, ...]:
    """Turns by the time their trace ended (arrival order breaks ties: Kafka partitions interleave)."""
    return tuple(sorted(conversation.turns, key=lambda record: record.end_time_unix_nano))
