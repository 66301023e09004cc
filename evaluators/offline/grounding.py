"""Claims checked against passages by the grounding model: what faithfulness and hallucination read.

Each claim is read once per context: its premise (the context's sentences that bear on it,
`premise.py`) and the model's calibrated P(supported), P(not stated), P(contradicted). Checks are
cached by (claim, question, passages), so the metrics of one record that ask about the same claims
(faithfulness, hallucination) share one model run, and the claims of a record run in one batch.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.offline.grounding_model import CONTRADICTED, SUPPORTED, UNSUPPORTED, GroundingModel
from evaluators.offline.idf import IdfTable
from evaluators.offline.premise import Premise, hypothesis, premise
from evaluators.offline.text import entities, numbers

_MEMORY = 2048  # claim checks kept (a record's claims are asked again by its other metrics)


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """One claim against one context, with what a reason needs to name."""

    claim: str
    premise: Premise
    supported: float
    unsupported: float
    contradicted: float
    absent: tuple[str, ...] = ()  # the claim's names and numbers the context never writes

    @property
    def node(self) -> int | None:
        """The passage that decides the claim: the one holding the sentence that matches it best."""
        return self.premise.best.node if self.premise.best is not None else None


class Grounding:
    """Claims in, checks out: batched model runs over a bounded, thread-safe cache."""

    def __init__(self, model: GroundingModel, idf: IdfTable) -> None:
        self.model, self.idf = model, idf
        self.thresholds = model.calibration
        self._memory: OrderedDict[tuple[str, str, tuple[str, ...]], ClaimCheck] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, claims: Sequence[tuple[str, str]], passages: Sequence[str]) -> list[ClaimCheck]:
        """A check per (claim, question) against the passages; the uncached ones in one model run."""
        context = tuple(passages)
        keys = [(claim, question, context) for claim, question in claims]
        with self._lock:
            known = {k: self._memory[k] for k in keys if k in self._memory}
        todo = list(dict.fromkeys(k for k in keys if k not in known))
        if todo:
            premises = [premise(claim, context, idf=self.idf) for claim, _, _ in todo]
            asked = [
                (p.text, hypothesis(claim, question))
                for p, (claim, question, _) in zip(premises, todo, strict=True)
            ]
            probabilities = self.model.probabilities(asked)
            whole = " ".join(context).lower()
            for key, built, row in zip(todo, premises, probabilities, strict=True):
                known[key] = ClaimCheck(
                    key[0], built, float(row[SUPPORTED]), float(row[UNSUPPORTED]), float(row[CONTRADICTED]),
                    _absent(key[0], whole, self.idf.common),
                )  # fmt: skip
            with self._lock:
                for key in todo:
                    self._memory[key] = known[key]
                while len(self._memory) > _MEMORY:
                    self._memory.popitem(last=False)
        return [known[k] for k in keys]

    def is_supported(self, check: ClaimCheck) -> bool:
        return check.supported >= self.thresholds.supported

    def is_contradicted(self, check: ClaimCheck) -> bool:
        return check.contradicted >= self.thresholds.contradicted


def _absent(claim: str, context: str, common: frozenset[str]) -> tuple[str, ...]:
    """Names and numbers of the claim that the context does not contain, as written: the most
    specific thing a reason can point at when a claim is not found."""
    found = [*entities(claim, common=common), *numbers(claim)]
    return tuple(dict.fromkeys(x for x in found if x.lower() not in context))
