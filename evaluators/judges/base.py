"""The `Judge` protocol: the only way a metric reaches a model.

Metrics decompose and count; a judge decomposes text and gives verdicts. Keeping the judge behind
these few operations lets the same metric run on an LLM (`OpenAIJudge`), on the offline grounding
model (`OfflineJudge`), or on both in a cascade, and lets the arithmetic be tested on fixed verdicts.

Every operation is batched: one call judges *all* the items of one metric for one case. That is
where ragpulse's cost advantage over per-claim or per-node judging comes from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal, Protocol, runtime_checkable


class ExtractKind(StrEnum):
    """What to decompose a text into."""

    CLAIMS = "claims"  # atomic factual claims of an answer (faithfulness, hallucination, noise)
    STATEMENTS = "statements"  # self-contained statements of any text (relevancy, recall, correctness)
    TRUTHS = "truths"  # the facts a context states, most important first (truths_extraction_limit)
    ENTITIES = "entities"  # named entities, numbers, dates (context entity recall)
    OPINIONS = "opinions"  # the views an answer expresses, not its facts (bias, toxicity)


class VerdictTask(StrEnum):
    """The question asked about every item against the reference text(s)."""

    SUPPORTED = "supported"  # can the item be inferred from the references? (entailment)
    CONTRADICTED = "contradicted"  # do the references contradict the item? (contradiction mode)
    RELEVANT = "relevant"  # is the item relevant to the question given as the reference?
    USEFUL = "useful"  # was the item (a context node) useful to arrive at the reference answer?
    SATISFIES = "satisfies"  # does the item (a text) satisfy the criterion given as the reference?
    REFUSES = "refuses"  # does the item (an answer) decline the request given as the reference?
    ANSWERABLE = "answerable"  # do the references (passages) contain the answer to the item (a question)?


VerdictValue = Literal["yes", "no", "idk"]


@dataclass(frozen=True, slots=True)
class ReplyMismatch:
    """A judge reply whose verdicts did not line up with the items asked about (`judges.matching`).

    Weak models skip an item, judge one twice or answer in their own order. Each verdict echoes the
    item it is about, so what can be placed is used and only the rest is lost: rather than failing
    the whole metric, or counting a verdict against the wrong item.
    """

    items: int  # items asked about
    unjudged: tuple[int, ...] = ()  # positions of the items no verdict was placed on
    ignored: int = 0  # verdicts about no item asked (an index beyond them, a repeat, no echo to go by)
    reordered: bool = False  # verdicts in another order than the items, placed by what they echo

    @property
    def judged(self) -> int:
        return self.items - len(self.unjudged)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One verdict on one item. `supporting_ids` are 0-based indexes into the references.

    `judged=False` marks a placeholder for an item the judge's reply held no verdict for: it keeps
    the item's place in the list (one verdict per item, in order) and no score may count it.
    `mismatch` is set on every verdict of a reply that did not line up with its items.
    """

    verdict: VerdictValue
    reason: str = ""
    supporting_ids: tuple[int, ...] = ()
    confidence: float | None = None  # calibrated P(verdict), when the judge knows it (offline judge)
    judged: bool = True
    mismatch: ReplyMismatch | None = None


@dataclass(frozen=True, slots=True)
class Questions:
    """Questions an answer would answer (ragas answer relevancy), and the noncommittal flag."""

    questions: tuple[str, ...]
    noncommittal: bool = False


@dataclass(frozen=True, slots=True)
class RubricScore:
    """A rubric score in [low, high]; `probabilities` maps score -> P when log-probs were returned."""

    score: float
    reason: str = ""
    probabilities: Mapping[int, float] | None = None


@dataclass(slots=True, kw_only=True)
class Usage:
    """Tokens and calls spent: what a judge reports per call, and what results carry, summed per
    metric, per case and per run.

    A plain slots dataclass, cheap on the judges' hot path; the pydantic result models hold it as a
    field and serialise it in this field order. Keyword-only, so the order is free to follow the
    reports.
    """

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def copy(self) -> Usage:
        """A snapshot (a usage scope keeps counting into the original)."""
        return replace(self)

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.cached_calls += other.cached_calls


class JudgeError(Exception):
    """The judge could not produce a valid answer (after its retries). Metrics report `error`."""


class ReplyMismatchError(JudgeError):
    """The judge's verdicts could not be used: none was about an item asked, or the metric scores only
    complete lists. Metrics report `error`, and the mismatch is counted like a partial one."""

    def __init__(self, message: str, mismatch: ReplyMismatch) -> None:
        super().__init__(message)
        self.mismatch = mismatch


@dataclass(frozen=True, slots=True)
class JudgeInfo:
    """Who judged: goes into Prometheus labels (`judge`, `model`) and evaluation spans."""

    judge: str  # "openai", "offline", "cascade"
    model: str
    extra: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class Judge(Protocol):
    """Operations every judge implements. All are async and batched; none returns NaN."""

    info: JudgeInfo

    async def extract(
        self, text: str, kind: ExtractKind, *, question: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Decompose `text` into items of `kind` (at most `limit` when given)."""
        ...

    async def verdicts(
        self, items: Sequence[str], references: Sequence[str], task: VerdictTask, *, sample: int = 0
    ) -> list[Verdict]:
        """One verdict per item, in order, in ONE judge call. `sample` varies repeated votes. An item
        the judge's reply left without a verdict gets a placeholder (`Verdict.judged` False)."""
        ...

    async def questions(self, answer: str, n: int = 3) -> Questions:
        """Questions the answer would answer (ragas-style answer relevancy)."""
        ...

    async def evaluation_steps(self, criteria: str) -> list[str]:
        """G-Eval step 1: turn criteria into evaluation steps."""
        ...

    async def rubric_score(
        self,
        steps: Sequence[str],
        fields: Mapping[str, str],
        *,
        low: int = 1,
        high: int = 10,
        rubric: str | None = None,
    ) -> RubricScore:
        """G-Eval step 2: score the fields against the steps, using log-probs when available."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embedding vectors, one per text."""
        ...

    def usage(self) -> Usage:
        """Cumulative usage since creation (callers diff snapshots per case / per metric)."""
        ...


# --- Additive extensions (backward compatible: a judge without them still works) ---------------------

VerdictCheck = tuple[Sequence[str], VerdictTask]  # (references, task): one question asked of every item


@runtime_checkable
class BatchingJudge(Protocol):
    """Optional operations that fold several judge calls into one; `JudgeSession` uses them when present.

    A judge that lacks them is driven through `extract` + `verdicts` with the same results, only
    with more calls.
    """

    async def verdicts_multi(
        self, items: Sequence[str], checks: Sequence[VerdictCheck]
    ) -> list[list[Verdict]]:
        """For each check, one verdict per item (result[check][item]), all in ONE judge call."""
        ...

    async def extract_verdicts(
        self, text: str, kind: ExtractKind, references: Sequence[str], task: VerdictTask
    ) -> list[tuple[str, Verdict]]:
        """Decompose `text` and judge every item against `references` in ONE judge call."""
        ...


@runtime_checkable
class VisionJudge(Protocol):
    """An optional operation for judges that can look at images (multi-modal RAG).

    Image passages (`evaluators.images`) travel beside the text as images; a judge without this
    operation cannot see them, and the multi-modal metrics say so instead of reading a data URI as text.
    """

    async def visual_verdict(
        self, response: str, references: Sequence[str], task: VerdictTask, *, question: str | None = None
    ) -> Verdict:
        """One verdict on the whole response against text and image references, in ONE judge call.

        SUPPORTED: is the response supported by the visual and textual context? RELEVANT: is the
        response to `question` in line with that context? `supporting_ids` index `references`.
        """
        ...
