"""RELEVANT (statement vs question) and USEFUL (node vs answer) verdicts: similarity plus answer type.

Similarity alone (embedding cosine, IDF-weighted word overlap) passes any statement about the right
entity, so answer relevancy used to accept "Berlin is the capital of Germany" for "When is the Berlin
office open?". The RELEVANT model adds what the question asks for (`question_type`): whether it asks a
known type and how surely the statement supplies none of it. USEFUL keeps the similarity features: a
node is judged against an answer, which asks for nothing.

Features are computed by name and each model takes the ones it was trained on, so a model file trained
before the answer-type features existed still works (its verdicts just cannot see the type).

Caching: each text's weighted stems are computed once (`_weighted_stems`: the question or answer is
the reference of every item of a case), each stem's IDF weight once per table (`IdfTable.weights`), and
`verdicts` reads what the question asks and the reference's stems once per call, not once per item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress

from evaluators.judges.base import Verdict, VerdictTask
from evaluators.offline.embedder import Embedder
from evaluators.offline.idf import IdfTable
from evaluators.offline.model import Model
from evaluators.offline.question_type import AnswerType, asked, bare_stance, supplies
from evaluators.offline.text import stems_of

SIMILARITY_FEATURE_NAMES: tuple[str, ...] = (
    "cosine",  # embedding similarity of item and reference
    "reference_recall",  # IDF share of the reference's content words that the item contains
    "item_recall",  # IDF share of the item's content words that the reference contains
)
RELEVANCE_FEATURE_NAMES: tuple[str, ...] = (
    *SIMILARITY_FEATURE_NAMES,
    "type_asked",  # 1 when the question asks a recognised answer type (time, number, place, ...)
    "type_mismatch",  # the statement supplies none of them, weighted by how reliable that finding is
)


T, Q, PL, PE, PR, R, YN = AnswerType
# (what the question asks for, what a statement that misses it does not do), for reasons
ASKS = {
    T: ("a time or date", "say when"),
    Q: ("a number or amount", "give a number or amount"),
    PL: ("a place", "say where"),
    PE: ("a person or organisation", "name anyone"),
    PR: ("steps or an instruction", "give steps or an instruction"),
    R: ("a reason", "give a reason"),
    YN: ("a yes or no", "take a stance or state the fact asked about"),
}
# How sure "supplies nothing of that type" is: numbers, dates and times are found reliably; people,
# reasons and stances have many unmarked forms ("The kubelet", "Food protects the stomach").
RELIABILITY = {T: 1.0, Q: 1.0, PL: 0.8, PR: 0.8, PE: 0.6, R: 0.6, YN: 0.6}


@dataclass(frozen=True, slots=True)
class Responsiveness:
    """The types a question asks, those a statement supplies, and how surely it misses them all."""

    asked: frozenset[AnswerType]
    supplied: frozenset[AnswerType]

    @property
    def missed(self) -> bool:
        return bool(self.asked) and not (self.asked & self.supplied)

    @property
    def mismatch(self) -> float:
        """0 when the statement supplies an asked type or nothing is asked; otherwise the reliability of
        the least reliable asked type (a miss is only as sure as the weakest detector behind it)."""
        return min(RELIABILITY[t] for t in self.asked) if self.missed else 0.0

    def reason(self) -> str:
        """'does not say when: the question asks for a time or date' (empty when nothing is missed)."""
        if not self.missed:
            return ""
        ordered = [t for t in AnswerType if t in self.asked]
        lacks = " or ".join(ASKS[t][1] for t in ordered)
        return f"does not {lacks}: the question asks for {', or '.join(ASKS[t][0] for t in ordered)}"


def responsiveness(
    statement: str,
    question: str,
    common: frozenset[str] = frozenset(),
    types: frozenset[AnswerType] | None = None,
) -> Responsiveness:
    """What `question` asks and what `statement` supplies of it (nothing is checked when nothing is asked);
    `types`: what it asks, when already read (`asked(question)`)."""
    types = asked(question) if types is None else types
    return Responsiveness(types, supplies(statement, question, common, types) if types else frozenset())


def _recall(stems: Sequence[str], weights: Sequence[float], total: float, pool: frozenset[str]) -> float:
    """The share of `total` (the sum of `weights`) carried by the stems found in `pool`."""
    if total <= 0.0:
        return 1.0
    return sum(compress(weights, map(pool.__contains__, stems))) / total


def similarity_features(
    item: str, reference: str, cosine: float, idf: IdfTable
) -> tuple[float, float, float]:
    """Similarity features of an item (statement, node) against a question or an answer."""
    return _similarity(_weighted_stems(item, idf), _weighted_stems(reference, idf), cosine)


WeightedStems = tuple[tuple[str, ...], tuple[float, ...], frozenset[str], float]


def _similarity(item: WeightedStems, reference: WeightedStems, cosine: float) -> tuple[float, float, float]:
    """`similarity_features` from both texts' weighted stems (`verdicts` reads the reference's once)."""
    return (
        cosine,
        _recall(reference[0], reference[1], reference[3], item[2]),
        _recall(item[0], item[1], item[3], reference[2]),
    )


@lru_cache(maxsize=4096)
def _weighted_stems(text: str, idf: IdfTable) -> WeightedStems:
    """A text's distinct content stems, their IDF weights, their set and the weights' sum: once per
    text, since the question (or the answer) is the reference of every statement (or node) of a case."""
    stems = tuple(dict.fromkeys(stems_of(text)))
    weights = idf.weights(stems)
    return stems, weights, frozenset(stems), sum(weights)


def relevance_features(
    item: str, question: str, cosine: float, idf: IdfTable, fit: Responsiveness | None = None
) -> tuple[float, ...]:
    """`RELEVANCE_FEATURE_NAMES` of a statement against the question it should answer."""
    fit = fit or responsiveness(item, question, idf.common)
    return (*similarity_features(item, question, cosine, idf), float(bool(fit.asked)), fit.mismatch)


class RelevanceScorer:
    """Verdicts for the RELEVANT and USEFUL tasks, each with its calibrated probability as confidence.

    `models` maps 'relevant' and 'useful' to logistic models over (a subset of) the features above.
    """

    def __init__(self, models: Mapping[str, Model], embedder: Embedder, idf: IdfTable) -> None:
        self.models = models
        self.embedder = embedder
        self.idf = idf

    def verdicts(self, items: Sequence[str], reference: str, task: VerdictTask) -> list[Verdict]:
        """One verdict per item; `reference` is the question (RELEVANT) or the answer (USEFUL)."""
        if not items:
            return []
        relevant = VerdictTask(task) is VerdictTask.RELEVANT
        model = self.models["relevant" if relevant else "useful"]
        vectors = self.embedder.embed([reference, *items])
        cosines = (vectors[1:] @ vectors[0]).astype(float).tolist()  # Python floats: cheaper arithmetic
        word = "relevant to the question" if relevant else "useful for the answer"
        # Per call, not per item: what the question asks, the reference's weighted stems, which
        # features the model reads (by name: a model may read a subset) and whether it reads the type.
        types = asked(reference) if relevant else frozenset()
        idf = self.idf
        weighted, type_asked = _weighted_stems(reference, idf), float(bool(types))
        reads = [RELEVANCE_FEATURE_NAMES.index(name) for name in model.names]
        reads_type = "type_mismatch" in model.names
        unasked = Responsiveness(types, frozenset())  # every statement's fit when the question asks no type
        verdicts: list[Verdict] = []
        for item, cosine in zip(items, cosines, strict=True):
            stems = _weighted_stems(item, idf)
            fit = None
            if relevant:
                fit = responsiveness(item, reference, idf.common, types) if types else unasked
            bare = fit is not None and YN in fit.asked and bare_stance(item)
            if bare or not stems[0]:
                verdicts.append(_bare_verdict(fit, bare))
                continue
            features: tuple[float, ...] = _similarity(stems, weighted, cosine)
            if fit is not None:
                features = (*features, type_asked, fit.mismatch)
            p = model.probability([features[k] for k in reads])
            detail = f"(similarity {cosine:.2f}, P={p:.2f})"
            if p >= model.threshold:
                gives = _gives(fit) if reads_type else ""
                verdicts.append(Verdict("yes", f"{word}{gives} {detail}", (0,), confidence=p))
            else:
                reason = _no_reason(fit, model, features, reads, word) if reads_type else f"not {word}"
                verdicts.append(Verdict("no", f"{reason} {detail}", (), confidence=1.0 - p))
        return verdicts


def _bare_verdict(fit: Responsiveness | None, answers_yes_no: bool) -> Verdict:
    """A bare stance answers a yes/no question (`answers_yes_no`); a statement without content words
    ('Yes.' to 'When ...?') answers nothing else."""
    if answers_yes_no:
        return Verdict("yes", "relevant to the question: gives a yes or no", (0,), confidence=1.0)
    reason = f"no content; it {fit.reason()}" if fit is not None and fit.missed else "no content"
    return Verdict("no", reason, confidence=1.0)


def _no_reason(
    fit: Responsiveness | None, model: Model, features: tuple[float, ...], reads: list[int], word: str
) -> str:
    """The answer type when it decided the verdict (the statement would pass without it); else
    'not relevant', with the missing type added when there is one (for a model that reads the type)."""
    if fit is None or not fit.missed:
        return f"not {word}"
    typeless = (*features[:-1], 0.0)  # the same statement supplying the type asked (type_mismatch is last)
    if model.probability([typeless[k] for k in reads]) >= model.threshold:
        return fit.reason()
    return f"not {word}; it also {fit.reason()}"


def _gives(fit: Responsiveness | None) -> str:
    """': gives a time or date' when the question asks a type the statement supplies (for a model
    that reads the answer type)."""
    if fit is None or not fit.asked or fit.missed:
        return ""
    return ": gives " + " and ".join(ASKS[t][0] for t in AnswerType if t in fit.asked & fit.supplied)
