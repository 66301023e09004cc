"""`LearnedJudge`: the offline judge with its grounding verdicts from the learned model (opt-in).

Faithfulness and hallucination ask two questions of each claim: is it supported by the passages,
and does it contradict one of them. Here both come from a cross-encoder fine-tuned on public NLI,
fact-checking and faithfulness sets (`grounding_model.py`, trained by `scripts/grounding/`), read on
the claim's premise (`premise.py`): calibrated P(supported) and P(contradicted), with thresholds
chosen on data it was not trained on. Everything else (claims, relevancy, answerability, refusals)
is `OfflineJudge`'s.

It is not the default: measured on sets neither judge was built on, it is better than the lexical
judge but only level with a word-overlap baseline, and it misses changed numbers and names that the
lexical judge catches (docs/grounding-model.md has the figures). `ragpulse eval --judge
offline-learned` or `LearnedJudge()` runs it.
"""

from __future__ import annotations

from collections.abc import Sequence

from evaluators.judges.base import JudgeInfo, Verdict, VerdictTask
from evaluators.offline.claims import answer_claims
from evaluators.offline.embedder import Embedder
from evaluators.offline.grounding import ClaimCheck, Grounding
from evaluators.offline.grounding_model import GroundingModel, default_model
from evaluators.offline.judge import OfflineJudge
from evaluators.offline.judge import _uncontradicted as uncontradicted
from evaluators.offline.lexicon import abstention_topic
from evaluators.offline.reasons import snippet
from evaluators.offline.text import stems_of

_QUOTE = 160  # what the model read from the deciding passage, as a reason quotes it


class LearnedJudge(OfflineJudge):
    """`OfflineJudge` whose SUPPORTED and CONTRADICTED verdicts come from the grounding model."""

    def __init__(
        self, *, embedder: Embedder | str = "wordllama", grounding: GroundingModel | None = None
    ) -> None:
        super().__init__(embedder=embedder)
        self.checks = Grounding(grounding or default_model(), self.idf)
        self.info = JudgeInfo(judge="offline", model=f"{self.checks.model.name}+{self.embedder.name}")

    async def verdicts(
        self, items: Sequence[str], references: Sequence[str], task: VerdictTask, *, sample: int = 0
    ) -> list[Verdict]:
        task = VerdictTask(task)
        refs = [r for r in references if r and r.strip()]
        if not items or not refs or task not in (VerdictTask.SUPPORTED, VerdictTask.CONTRADICTED):
            return await super().verdicts(items, references, task, sample=sample)
        self._calls += 1
        if task is VerdictTask.SUPPORTED:
            return self._supported_all(items, refs)
        # As in OfflineJudge: claims are always checked against passages, the longer side.
        if max(len(item) for item in items) > max(len(r) for r in refs):
            return self._conflicts_by_passage(list(items), refs)
        return [self._conflict(item, refs) for item in items]

    def _checks(self, items: Sequence[str], refs: Sequence[str]) -> list[ClaimCheck]:
        return self.checks.check([(item, self._question(item)) for item in items], refs)

    def _supported_all(self, items: Sequence[str], refs: list[str]) -> list[Verdict]:
        """Supported (`yes`), contradicted (`no`) or not found (`idk`), the claims in one batch;
        abstentions ('the documents do not mention X') are right when X is not stated."""
        out: dict[int, Verdict] = {}
        checked = []
        for i, item in enumerate(items):
            if not stems_of(item):
                out[i] = Verdict("idk", "no factual content to check")
            elif (topic := abstention_topic(item)) is not None:
                out[i] = self._abstained(topic, refs)
            else:
                checked.append(i)
        for i, check in zip(checked, self._checks([items[i] for i in checked], refs), strict=True):
            out[i] = self._verdict(check)
        return [out[i] for i in range(len(items))]

    def _verdict(self, check: ClaimCheck) -> Verdict:
        node = () if check.node is None else (check.node,)
        if self.checks.is_contradicted(check):
            return Verdict("no", _contradicted_by(check), node, confidence=check.contradicted)
        if self.checks.is_supported(check):
            return Verdict("yes", _matches(check), node, confidence=check.supported)
        return Verdict("idk", _not_found(check), (), confidence=1.0 - check.supported)

    def _abstained(self, topic: str, refs: Sequence[str]) -> Verdict:
        [check] = self.checks.check([(topic, "")], refs)
        if self.checks.is_supported(check):
            node = () if check.node is None else (check.node,)
            reason = f"wrong to abstain: {_quote(check)} states {topic!r}"
            return Verdict("no", reason, node, confidence=check.supported)
        reason = f"right to abstain: the context does not state {topic!r} (P(stated)={check.supported:.2f})"
        return Verdict("yes", reason, (), confidence=1.0 - check.supported)

    def _claims(self, answers: Sequence[str]) -> list[str]:
        return [
            c
            for a in answers
            for c in (answer_claims(a) or [a])
            if stems_of(c) and abstention_topic(c) is None
        ]

    def _conflict(self, item: str, refs: list[str]) -> Verdict:
        """Faithfulness' contradiction mode: `yes` only where the model finds a conflict; what the
        context does not state is `idk`, as in deepeval."""
        claims = self._claims([item])
        if not claims:
            return Verdict("idk", "no factual content to check")
        checks = self._checks(claims, refs)
        worst = max(checks, key=lambda c: c.contradicted)
        if self.checks.is_contradicted(worst):
            return Verdict("yes", _contradicted_by(worst), (), confidence=worst.contradicted)
        weakest = min(checks, key=lambda c: c.supported)
        if self.checks.is_supported(weakest):  # every claim supported: named by its weakest one's passage
            node = () if weakest.node is None else (weakest.node,)
            return Verdict("no", _matches(weakest), node, confidence=1.0 - worst.contradicted)
        return uncontradicted(worst.contradicted)

    def _conflicts_by_passage(self, passages: list[str], answers: list[str]) -> list[Verdict]:
        """Hallucination's question, per passage: each claim is checked once against all the passages
        (the check faithfulness uses, cached), and a conflict counts against the passage holding the
        sentence the claim matches best, not against one that only resembles it."""
        claims = self._claims(answers)
        if not claims:
            return [Verdict("idk", "no factual content to check") for _ in passages]
        worst: dict[int, ClaimCheck] = {}
        for check in self._checks(claims, passages):
            if check.node is not None and (
                check.node not in worst or check.contradicted > worst[check.node].contradicted
            ):
                worst[check.node] = check
        verdicts = []
        for node in range(len(passages)):
            found = worst.get(node)
            if found is not None and self.checks.is_contradicted(found):
                verdicts.append(Verdict("yes", _contradicted_by(found), (), confidence=found.contradicted))
            else:
                verdicts.append(uncontradicted(found.contradicted if found is not None else 0.0))
        return verdicts


def _quote(check: ClaimCheck) -> str:
    if check.premise.best is None:
        return "the context"
    return f'node {check.premise.best.node}: "{snippet(check.premise.quoted(), _QUOTE)}"'


def _matches(check: ClaimCheck) -> str:
    return f"matches {_quote(check)} (P(supported)={check.supported:.2f})"


def _contradicted_by(check: ClaimCheck) -> str:
    return f"contradicted by {_quote(check)} (P(contradicted)={check.contradicted:.2f})"


def _not_found(check: ClaimCheck) -> str:
    """Not found; the claim's names and numbers the context never writes first."""
    absent = f"{', '.join(repr(x) for x in check.absent[:3])} not in the context; " if check.absent else ""
    return (
        f"not found in the context: {absent}closest is {_quote(check)} (P(supported)={check.supported:.2f})"
    )
