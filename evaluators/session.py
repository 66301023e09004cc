"""`JudgeSession`: one case's view of a judge, where metrics share judge work.

Metrics of one case run concurrently and often need the same thing: faithfulness, hallucination,
answer relevancy and noise sensitivity all start from the answer's claims. The session runs each
distinct request once and hands every asker the same result. Verdict requests on the same items
(faithfulness asks "supported by the context?", answer relevancy asks "relevant to the question?"
of the same claims) are coalesced into one multi-check call when the judge offers `verdicts_multi`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evaluators.judges.base import (
    BatchingJudge,
    ExtractKind,
    Judge,
    Questions,
    ReplyMismatchError,
    RubricScore,
    Verdict,
    VerdictTask,
    VisionJudge,
)
from evaluators.judges.matching import note_mismatch, reply_mismatch
from evaluators.judges.prompts import current_overrides

if TYPE_CHECKING:
    from evaluators.case import TestCase

_COALESCE_ROUNDS = 3  # event-loop turns a verdict request waits for siblings to join its call


@dataclass(slots=True)
class _PendingCheck:
    references: tuple[str, ...]
    task: VerdictTask
    future: asyncio.Future[list[Verdict]]


class JudgeSession:
    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self._memo: dict[Hashable, asyncio.Future[Any]] = {}
        self._pending: dict[Hashable, list[_PendingCheck]] = {}
        self._batching = isinstance(judge, BatchingJudge)
        self._background: set[asyncio.Task[Any]] = set()

    async def extract(
        self, text: str, kind: ExtractKind, *, question: str | None = None, limit: int | None = None
    ) -> list[str]:
        # Only the extraction's own instruction changes its request: a metric that overrides how
        # verdicts are reasoned (`reasoning="cot"`) still shares the answer's claims.
        key = ("extract", text, kind, question, limit, _overrides_key(ExtractKind(kind).value))
        return list(
            await self._once(key, lambda: self.judge.extract(text, kind, question=question, limit=limit))
        )

    async def answer_claims(self, case: TestCase) -> list[str]:
        """The answer's claims, extracted once per case and shared by every metric that needs them.

        The question goes along so a judge can resolve references and treat restatements of the
        question as neutral (the offline judge's novelty feature needs it).
        """
        return await self.extract(case.actual_output or "", ExtractKind.CLAIMS, question=case.input)

    async def reference_claims(self, case: TestCase) -> list[str]:
        """The expected output's claims, extracted once per case, in the same units as the answer's
        (RAGChecker compares the two claim by claim, in both directions)."""
        return await self.extract(case.expected_output or "", ExtractKind.CLAIMS, question=case.input)

    async def verdicts(
        self,
        items: Sequence[str],
        references: Sequence[str],
        task: VerdictTask,
        *,
        sample: int = 0,
        partial: bool = False,
    ) -> list[Verdict]:
        """One verdict per item. `partial`: the caller scores only the items judged (`Verdict.judged`)
        when the judge's reply left some without a verdict; otherwise such a reply fails the call
        (`ReplyMismatchError`), so that no metric counts a placeholder as a verdict. A reply that did
        not line up is noted for the calling metric either way (`matching.note_mismatch`)."""
        if not items:
            return []
        verdicts = await self._verdicts(tuple(items), tuple(references), task, sample)
        mismatch = reply_mismatch(verdicts)
        if mismatch is not None:
            if mismatch.unjudged and not partial:
                raise ReplyMismatchError(
                    f"the judge gave verdicts for {mismatch.judged} of {mismatch.items} items; "
                    "this metric scores complete verdict lists only",
                    mismatch,
                )
            note_mismatch(mismatch)
        return verdicts

    async def _verdicts(
        self, items_t: tuple[str, ...], references_t: tuple[str, ...], task: VerdictTask, sample: int
    ) -> list[Verdict]:
        key = ("verdicts", items_t, references_t, task, sample, _overrides_key())
        if key in self._memo:
            return list(await self._memo[key])
        if sample or not self._batching:
            return list(
                await self._once(key, lambda: self.judge.verdicts(items_t, references_t, task, sample=sample))
            )
        future: asyncio.Future[list[Verdict]] = asyncio.get_running_loop().create_future()
        self._memo[key] = future
        group_key = (items_t, _overrides_key())
        group = self._pending.setdefault(group_key, [])
        group.append(_PendingCheck(references_t, task, future))
        if len(group) == 1:
            self._start(self._flush(group_key, items_t))
        return list(await future)

    async def extract_verdicts(
        self, text: str, kind: ExtractKind, references: Sequence[str], task: VerdictTask
    ) -> list[tuple[str, Verdict]]:
        """Decompose and judge in one call when the judge can, else extract then judge."""
        if self._batching:
            key = ("extract_verdicts", text, kind, tuple(references), task, _overrides_key())
            judge: Any = self.judge
            return list(
                await self._once(key, lambda: judge.extract_verdicts(text, kind, list(references), task))
            )
        items = await self.extract(text, kind)
        return list(zip(items, await self.verdicts(items, references, task), strict=True))

    @property
    def sees_images(self) -> bool:
        """The judge can look at image passages (it offers `visual_verdict`)."""
        return isinstance(self.judge, VisionJudge)

    async def visual_verdict(
        self, response: str, references: Sequence[str], task: VerdictTask, *, question: str | None = None
    ) -> Verdict:
        """The multi-modal verdict on a whole response, asked once per case (check `sees_images` first)."""
        key = ("visual", response, tuple(references), task, question, _overrides_key())
        judge: Any = self.judge
        return await self._once(
            key, lambda: judge.visual_verdict(response, list(references), task, question=question)
        )

    async def questions(self, answer: str, n: int) -> Questions:
        return await self._once(
            ("questions", answer, n, _overrides_key()), lambda: self.judge.questions(answer, n)
        )

    async def evaluation_steps(self, criteria: str) -> list[str]:
        key = ("steps", criteria, _overrides_key())
        return list(await self._once(key, lambda: self.judge.evaluation_steps(criteria)))

    async def rubric_score(
        self, steps: Sequence[str], fields: Mapping[str, str], *, low: int, high: int, rubric: str | None
    ) -> RubricScore:
        key = ("rubric", tuple(steps), tuple(fields.items()), low, high, rubric, _overrides_key())
        return await self._once(
            key, lambda: self.judge.rubric_score(steps, fields, low=low, high=high, rubric=rubric)
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embeds each distinct text once per case (answer similarity and correctness share them)."""
        missing = [t for t in dict.fromkeys(texts) if ("embed", t) not in self._memo]
        if missing:
            batch = self._start(self.judge.embed(missing))
            for position, text in enumerate(missing):
                self._memo[("embed", text)] = self._start(_pick(batch, position))
        return [list(await self._memo[("embed", t)]) for t in texts]

    # -- internals -------------------------------------------------------------------------------
    async def _once(self, key: Hashable, factory: Callable[[], Awaitable[Any]]) -> Any:
        if key not in self._memo:
            self._memo[key] = self._start(factory())
        return await self._memo[key]

    def _start(self, awaitable: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(awaitable)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _flush(self, group_key: Hashable, items: tuple[str, ...]) -> None:
        for _ in range(_COALESCE_ROUNDS):
            await asyncio.sleep(0)
        group = self._pending.pop(group_key)
        try:
            if len(group) == 1:
                results = [await self.judge.verdicts(items, group[0].references, group[0].task)]
            else:
                judge: Any = self.judge
                results = await judge.verdicts_multi(items, [(p.references, p.task) for p in group])
        except BaseException as error:  # every waiter must hear about the failure
            for pending in group:
                if not pending.future.done():
                    pending.future.set_exception(error)
            if not isinstance(error, Exception):
                raise
            return
        for pending, result in zip(group, results, strict=True):
            pending.future.set_result(result)


async def _pick(batch: asyncio.Task[list[list[float]]], position: int) -> list[float]:
    return (await batch)[position]


def _overrides_key(*names: str) -> tuple[tuple[str, str], ...]:
    """The instruction overrides in force (only those of `names`, when given): part of a request."""
    overrides = current_overrides()
    chosen = names or tuple(overrides)
    return tuple(sorted((name, overrides[name]) for name in chosen if name in overrides))
