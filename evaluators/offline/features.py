"""Grounding features of one claim against the retrieved nodes, with the evidence behind them.

Each feature is a reason a person would give: the claim's rare words are (not) in the context, a
number or a name in the claim is missing from it, the best-matching passage says the opposite
(negation), or the claim merely restates the question. The evidence is kept so that a verdict
can name the number or the entity that failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from evaluators.offline.idf import IdfTable, default_idf
from evaluators.offline.text import Window, content_stems, entities, negation_count, numbers, windows

FEATURE_NAMES: tuple[str, ...] = (
    "recall_window",  # IDF-weighted share of the claim's content words in its best 2-sentence window
    "recall_all",  # ... anywhere in the references
    "novel_recall_window",  # the same, for words the question did not already contain
    "novel_recall_all",
    "max_missing_idf",  # rarity of the rarest new word found nowhere in the references (0..1)
    "missing_numbers",  # numbers of the claim absent from the references (clipped at 2)
    "number_conflict",  # a number is missing AND the best window states a different one
    "missing_entities",  # capitalised names of the claim absent from the references (clipped at 3)
    "missing_entity_share",
    "window_missing_entities",  # names found in the references but not in the best window (clipped at 2)
    "negation_flip",  # negation parity differs from the best window, weighted by its match
)


@dataclass(frozen=True, slots=True)
class References:
    """The retrieved nodes, pre-tokenised once and shared by all claims of a case."""

    texts: tuple[str, ...]
    windows: tuple[Window, ...]
    node_stems: tuple[frozenset[str], ...]
    all_stems: frozenset[str]
    all_numbers: frozenset[str]
    lowered: str


@lru_cache(maxsize=1024)
def prepare(texts: tuple[str, ...]) -> References:
    all_windows = tuple(w for i, t in enumerate(texts) for w in windows(t, i))
    node_stems = tuple(frozenset(content_stems(t)) for t in texts)
    return References(
        texts=texts,
        windows=all_windows,
        node_stems=node_stems,
        all_stems=frozenset().union(*node_stems),
        all_numbers=frozenset(n for w in all_windows for n in w.numbers),
        lowered=" ".join(texts).lower(),
    )


@dataclass(frozen=True, slots=True)
class Evidence:
    """Features of one claim plus what a reason needs to name."""

    features: tuple[float, ...]
    best_window: Window | None
    supporting_nodes: tuple[int, ...]
    missing_words: tuple[str, ...] = ()
    missing_numbers: tuple[str, ...] = ()
    window_numbers: tuple[str, ...] = ()
    missing_entities: tuple[str, ...] = ()
    elsewhere_entities: tuple[str, ...] = ()  # in the references, but not in the best window
    rest_match: float = 0.0  # best-window recall of the claim without its missing names and numbers
    negation_flip: bool = False
    restates_question: bool = False

    @property
    def has_conflict(self) -> bool:
        """A specific contradiction, not mere absence: the best window matches the rest of the claim
        but states another number, another name, or the opposite (negation)."""
        swapped_number = bool(self.missing_numbers) and bool(self.window_numbers) and self.rest_match >= 0.5
        swapped_name = bool(self.missing_entities or self.elsewhere_entities) and self.rest_match >= 0.6
        return swapped_number or swapped_name or self.negation_flip


def _recall(stems: Sequence[str], weights: Sequence[float], pool: frozenset[str]) -> float:
    total = sum(weights)
    if total <= 0.0:
        return 1.0
    return sum(w for s, w in zip(stems, weights, strict=True) if s in pool) / total


class GroundingFeaturizer:
    """Turns (claim, references, question) into the feature vector of the grounding model."""

    def __init__(self, idf: IdfTable | None = None) -> None:
        self.idf = idf or default_idf()

    def evidence(self, claim: str, refs: References, question: str = "") -> Evidence:
        stems = list(dict.fromkeys(content_stems(claim)))
        weights = [self.idf.weight(s) for s in stems]
        asked = frozenset(content_stems(question)) if question else frozenset()
        novel = [(s, w) for s, w in zip(stems, weights, strict=True) if s not in asked]
        novel_stems, novel_weights = [s for s, _ in novel], [w for _, w in novel]

        best, best_recall, novel_window = None, 0.0, 0.0
        sentence, sentence_recall = None, 0.0
        for window in refs.windows:
            recall = _recall(stems, weights, window.stems)
            if best is None or recall > best_recall:
                best, best_recall = window, recall
            if window.single and (sentence is None or recall > sentence_recall):
                sentence, sentence_recall = window, recall
            novel_window = max(novel_window, _recall(novel_stems, novel_weights, window.stems))
        node_recalls = [_recall(stems, weights, pool) for pool in refs.node_stems]
        recall_node = max(node_recalls, default=0.0)
        supporting = tuple(i for i, r in enumerate(node_recalls) if r >= 0.5 and r >= recall_node - 0.15)

        missing = [(s, w) for s, w in novel if s not in refs.all_stems]
        max_missing = max((w for _, w in missing), default=0.0) / self.idf.max_weight

        asked_numbers = set(numbers(question)) if question else set()
        claim_numbers = [n for n in dict.fromkeys(numbers(claim)) if n not in asked_numbers]
        missing_numbers = tuple(n for n in claim_numbers if n not in refs.all_numbers)
        window_numbers = tuple(sorted(best.numbers - set(claim_numbers))) if best else ()
        conflict = float(bool(missing_numbers) and bool(window_numbers))

        asked_lower = question.lower()
        names = [e for e in entities(claim, common=self.idf.common) if e.lower() not in asked_lower]
        missing_names = tuple(e for e in names if not self._entity_found(e, refs))

        elsewhere = self._swapped_names(claim, names, missing_names, best)
        flip = sentence is not None and (negation_count(claim) % 2) != (sentence.negations % 2)
        failed = {p for name in (*missing_names, *elsewhere) for p in content_stems(name)}
        failed |= set(missing_numbers)
        rest = [(s, w) for s, w in zip(stems, weights, strict=True) if s not in failed]
        rest_match = _recall([s for s, _ in rest], [w for _, w in rest], best.stems) if best and rest else 0.0
        features = (
            best_recall,
            _recall(stems, weights, refs.all_stems),
            novel_window if novel_stems else 1.0,
            _recall(novel_stems, novel_weights, refs.all_stems),
            max_missing,
            float(min(len(missing_numbers), 2)),
            conflict,
            float(min(len(missing_names), 3)),
            len(missing_names) / len(names) if names else 0.0,
            float(min(len(elsewhere), 2)),
            sentence_recall if flip else 0.0,
        )
        return Evidence(
            features=features,
            best_window=best,
            supporting_nodes=supporting,
            missing_words=tuple(s for s, _ in sorted(missing, key=lambda sw: -sw[1])[:3]),
            missing_numbers=missing_numbers,
            window_numbers=window_numbers,
            missing_entities=missing_names,
            elsewhere_entities=tuple(elsewhere),
            rest_match=rest_match,
            negation_flip=flip and sentence_recall >= 0.5,
            restates_question=bool(stems) and not novel_stems,
        )

    def _swapped_names(
        self, claim: str, names: list[str], missing: tuple[str, ...], best: Window | None
    ) -> list[str]:
        """Names of the claim found in the references but not in its best window, when that window
        names someone else instead ('Saturn is the largest' against 'Jupiter is the largest'). A
        window naming nobody is just a coreference ('The tower is 330 metres tall')."""
        if best is None:
            return []
        lowered = claim.lower()
        others = [n for n in entities(best.text, common=self.idf.common) if n.lower() not in lowered]
        window = best.text.lower()
        return [e for e in names if e not in missing and e.lower() not in window] if others else []

    @staticmethod
    def _entity_found(entity: str, refs: References) -> bool:
        if entity.lower() in refs.lowered:
            return True
        parts = content_stems(entity)
        return bool(parts) and all(p in refs.all_stems for p in parts)


RELEVANCE_FEATURE_NAMES: tuple[str, ...] = (
    "cosine",  # embedding similarity of item and reference
    "reference_recall",  # IDF share of the reference's content words that the item contains
    "item_recall",  # IDF share of the item's content words that the reference contains
)


def relevance_features(item: str, reference: str, cosine: float, idf: IdfTable) -> tuple[float, ...]:
    """Similarity features of an item (statement, node) against a question or an answer."""
    item_stems = list(dict.fromkeys(content_stems(item)))
    reference_stems = list(dict.fromkeys(content_stems(reference)))
    return (
        cosine,
        _recall(reference_stems, [idf.weight(s) for s in reference_stems], frozenset(item_stems)),
        _recall(item_stems, [idf.weight(s) for s in item_stems], frozenset(reference_stems)),
    )
