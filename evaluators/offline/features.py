"""Grounding features of one claim against the retrieved nodes, with the evidence behind them.

Each feature is a reason a person would give: the claim's rare words are (not) in the context, or
only as synonyms; a number, date or name of the claim is missing, or the best-matching passage
states another one; that passage says the opposite (negation, an antonym); the claim merely
restates the question. The evidence is kept so that a verdict can name what failed and where.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evaluators.offline import alignment
from evaluators.offline.focus import focus
from evaluators.offline.idf import IdfTable, default_idf
from evaluators.offline.lexicon import antonym
from evaluators.offline.quantities import Quantity, conflicts, quantities, supports
from evaluators.offline.text import (
    NEGATIONS,
    STOPWORDS,
    Window,
    content_stems,
    entities,
    negation_count,
    stem,
    windows,
    words,
)

FEATURE_NAMES: tuple[str, ...] = (
    "recall_window",  # IDF-weighted share of the claim's content words in its best 2-sentence window
    "recall_all",  # ... anywhere in the references
    "novel_recall_window",  # the same, for words the question did not already contain
    "novel_recall_all",
    "soft_recall_window",  # recall_window where a common word may be matched by a synonym
    "soft_novel_recall_window",
    "max_missing_idf",  # rarity of the rarest new word matched nowhere, not even softly (0..1)
    "missing_numbers",  # numbers, dates, amounts of the claim that no reference supports (clipped at 2)
    "number_conflict",  # ... and the best window states another value of the same kind
    "missing_entities",  # capitalised names of the claim absent from the references (clipped at 3)
    "missing_entity_share",
    "window_missing_entities",  # names in the references but not in a best window naming others
    "negation_flip",  # negation parity differs from the best sentence, weighted by its match
    "antonym_flip",  # a word of the claim faces its antonym in the best window, weighted by its match
)
_SOFT_WINDOWS = 3  # soft alignment runs on the windows with the best exact recall only (speed)
_SOFT_FULL = 0.5  # a soft match at least this strong counts as found (for 'missing' words)
_CAPITALISED_WORD = re.compile(r"\b[A-Z]\w*")  # (a name's words do not decide which clause it is about)
_OWN_SENTENCE = 0.8  # polarity is compared with a sentence matching this share of the best window's recall
_CLAUSE_WORDS = 4  # shorter claims are answer fragments: negation and antonyms are not compared


@dataclass(frozen=True, slots=True)
class References:
    """The retrieved nodes, pre-tokenised once and shared by all claims of a case."""

    texts: tuple[str, ...]
    windows: tuple[Window, ...]
    node_stems: tuple[frozenset[str], ...]
    all_stems: frozenset[str]
    node_quantities: tuple[tuple[Quantity, ...], ...]
    all_quantities: tuple[Quantity, ...]
    lowered: str


@lru_cache(maxsize=1024)
def prepare(texts: tuple[str, ...]) -> References:
    all_windows = tuple(w for i, t in enumerate(texts) for w in windows(t, i))
    node_stems = tuple(frozenset(content_stems(t)) for t in texts)
    node_quantities = tuple(quantities(t) for t in texts)
    return References(
        texts=texts,
        windows=all_windows,
        node_stems=node_stems,
        all_stems=frozenset().union(*node_stems),
        node_quantities=node_quantities,
        all_quantities=tuple(q for node in node_quantities for q in node),
        lowered=" ".join(texts).lower(),
    )


@lru_cache(maxsize=8192)
def _window_words(text: str) -> tuple[tuple[str, ...], np.ndarray]:
    """A window's content words (surface form, for vectors) and their vectors, once per window."""
    found = tuple(dict.fromkeys(w for w in words(text) if _is_content(w)))
    return found, alignment.vectors(found)


def _is_content(word: str) -> bool:
    return len(word) > 1 and word not in STOPWORDS and word not in NEGATIONS


@dataclass(frozen=True, slots=True)
class Evidence:
    """Features of one claim plus what a reason needs to name."""

    features: tuple[float, ...]
    best_window: Window | None
    supporting_nodes: tuple[int, ...]
    missing_words: tuple[str, ...] = ()
    missing_numbers: tuple[str, ...] = ()
    window_numbers: tuple[str, ...] = ()  # the conflicting values the best window states
    missing_entities: tuple[str, ...] = ()
    elsewhere_entities: tuple[str, ...] = ()  # in the references, but not in the best window
    antonyms: tuple[tuple[str, str], ...] = ()  # (claim word, window word)
    rest_match: float = 0.0  # best-window soft recall of the claim without its missing names and numbers
    window_names_others: bool = False  # the best window names someone or something the claim does not
    negation_flip: bool = False
    restates_question: bool = False

    @property
    def has_conflict(self) -> bool:
        """A specific contradiction, not mere absence: the best window matches the rest of the claim
        but states another number, another name, or the opposite (negation, an antonym)."""
        swapped_number = bool(self.window_numbers) and self.rest_match >= 0.5
        # A name found elsewhere in the context but not here, where another is named, is a swap; a
        # name found nowhere is one only when it is the claim's single gap (else it is an addition).
        swapped = bool(self.elsewhere_entities) and self.rest_match >= 0.6
        invented = bool(self.missing_entities) and self.window_names_others and self.rest_match >= 0.9
        swapped_name = swapped or invented
        return swapped_number or swapped_name or self.negation_flip or bool(self.antonyms)


def _with_amounts(
    stems: frozenset[str], stated: Sequence[Quantity], amounts: dict[str, Quantity]
) -> frozenset[str]:
    """A text's stems plus the tokens of the claim's amounts that it states."""
    if not amounts:
        return stems
    return stems | {t for t, q in amounts.items() if any(supports(r, q) for r in stated)}


def _recall(stems: Sequence[str], weights: Sequence[float], pool: frozenset[str]) -> float:
    total = sum(weights)
    if total <= 0.0:
        return 1.0
    return sum(w for s, w in zip(stems, weights, strict=True) if s in pool) / total


def _soft_recall(weights: np.ndarray, matches: np.ndarray) -> float:
    total = float(weights.sum())
    return float(weights @ matches) / total if total > 0 else 1.0


class GroundingFeaturizer:
    """Turns (claim, references, question) into the feature vector of the grounding model."""

    def __init__(self, idf: IdfTable | None = None) -> None:
        self.idf = idf or default_idf()

    def evidence(self, claim: str, refs: References, question: str = "") -> Evidence:
        asked_quantities = quantities(question) if question else ()
        all_claim_quantities = quantities(claim)
        claim_quantities = [
            q for q in all_claim_quantities if not any(supports(a, q) for a in asked_quantities)
        ]
        missing_quantities = [
            q for q in claim_quantities if not any(supports(r, q) for r in refs.all_quantities)
        ]
        # A supported amount is matched as a whole ('0.33 km' for '330 metres'): its words leave the
        # word features, which would otherwise call '0.33' and 'km' missing, and it counts as one
        # token found where a quantity supports it (so 'came out on September 14, 2023' is judged
        # on the date it states, not on 'came').
        found = [q for q in all_claim_quantities if q not in missing_quantities]
        matched = {w for q in found for w in words(q.text)}
        surface = list(dict.fromkeys(w for w in words(claim) if _is_content(w) and w not in matched))
        stems = [stem(w) for w in surface]
        weight_of = [self.idf.weight(s) for s in stems]
        asked = frozenset(content_stems(question)) if question else frozenset()
        novel = [s not in asked for s in stems]
        amounts = {f"#{q.text}": q for q in found}
        for token, q in amounts.items():
            surface.append(token)
            stems.append(token)
            weight_of.append(max((self.idf.weight(stem(w)) for w in words(q.text)), default=1.0))
            novel.append(q in claim_quantities)
        weights = np.array(weight_of, dtype=float)
        novel_mask = np.array(novel, dtype=bool)
        dated = {w for q in all_claim_quantities for w in words(q.text)}  # 'March 1889' is a date, not a name
        names = [n for n in self._names(claim, question) if not set(words(n)) <= dated]
        name_words = {w for n in names for w in words(n)}
        softable = np.array(
            [not w[0].isdigit() and w not in name_words and w not in amounts for w in surface], dtype=bool
        )
        pools = {w: _with_amounts(w.stems, w.quantities, amounts) for w in refs.windows}
        node_pools = [
            _with_amounts(p, q, amounts) for p, q in zip(refs.node_stems, refs.node_quantities, strict=True)
        ]
        all_pool = refs.all_stems | frozenset(amounts)

        weight_list, novel_list = weights.tolist(), (weights * novel_mask).tolist()
        exact = [(_recall(stems, weight_list, pools[w]), w) for w in refs.windows]
        best_recall, best = max(exact, key=lambda e: e[0], default=(0.0, None))
        # The sentence the claim's words (not its amounts, which may be swapped) match best.
        word_list = [0.0 if s in amounts else w for s, w in zip(stems, weight_list, strict=True)]
        sentence = max(
            ((_recall(stems, word_list, w.stems), w) for w in refs.windows if w.single),
            key=lambda e: e[0],
            default=None,
        )
        novel_exact = max((_recall(stems, novel_list, pools[w]) for w in refs.windows), default=0.0)
        soft_best, soft_novel, soft_window, soft_per_word = 0.0, 0.0, best, np.zeros(len(stems))
        for _, candidate in sorted(exact, key=lambda e: -e[0])[:_SOFT_WINDOWS]:
            matches = self._matches(surface, stems, softable, candidate, pools[candidate])
            recall = _soft_recall(weights, matches)
            if soft_window is None or recall > soft_best:
                soft_best, soft_window, soft_per_word = recall, candidate, matches
            soft_novel = max(soft_novel, _soft_recall(weights[novel_mask], matches[novel_mask]))
        node_recalls = [_recall(stems, weight_list, pool) for pool in node_pools]
        recall_node = max(node_recalls, default=0.0)
        supporting = tuple(i for i, r in enumerate(node_recalls) if r >= 0.5 and r >= recall_node - 0.15)

        missing = [
            (stems[i], float(weights[i]))
            for i in range(len(stems))
            if novel_mask[i] and stems[i] not in all_pool and soft_per_word[i] < _SOFT_FULL
        ]
        max_missing = max((w for _, w in missing), default=0.0) / self.idf.max_weight

        window = soft_window
        # A value the context states elsewhere is still swapped when the sentence matching the rest
        # of the claim states another ('4 weeks' before leave, where 4 weeks is someone else's leave).
        here = sentence[1] if sentence else None
        moved = [
            q
            for q in claim_quantities
            if q not in missing_quantities
            and here is not None
            and not any(supports(r, q) for r in here.quantities)
        ]
        conflicting = [
            (q, r.text)
            for q, stated in ((q, window.quantities if window else ()) for q in missing_quantities)
            for r in stated
            if conflicts(r, q)
        ] + [(q, r.text) for q in moved for r in (here.quantities if here else ()) if conflicts(r, q)]
        said = tuple(dict.fromkeys(text for _, text in conflicting))
        missing_names = tuple(e for e in names if not self._entity_found(e, refs))
        clause_text = (
            focus(here, stems, word_list, frozenset(stem(w) for w in _CAPITALISED_WORD.findall(claim)))
            if here
            else None
        )
        names_others = window is not None and self._names_others(claim, window)
        elsewhere = self._swapped_names(names, missing_names, window) if names_others else []
        if not elsewhere and clause_text and self._names_others(claim, clause_text):
            elsewhere = self._swapped_names(names, missing_names, clause_text)
        # Polarity needs a clause: an answer fragment ('sister company', 'no') has none to flip; and
        # a sentence that is the claim's, not one of two it draws on ('Ibuprofen should not be taken
        # by ...' next to 'Taking it with food can reduce stomach upset').
        clause = len(claim.split()) >= _CLAUSE_WORDS
        negations = negation_count(clause_text) if clause_text else here.negations if here else 0
        own = here is not None and _recall(stems, weight_list, pools[here]) >= _OWN_SENTENCE * best_recall
        flip = clause and own and (negation_count(claim) % 2) != (negations % 2)
        opposites = self._antonyms(surface, stems, window) if clause else ()

        failed = {p for name in (*missing_names, *elsewhere) for p in content_stems(name)}
        failed |= {stem(w) for q in missing_quantities for w in words(q.text)}
        failed |= {f"#{q.text}" for q, _ in conflicting}
        rest = np.array([s not in failed for s in stems], dtype=bool)
        rest_match = _soft_recall(weights[rest], soft_per_word[rest]) if rest.any() and window else 0.0
        sentence_recall = sentence[0] if sentence else 0.0
        features = (
            best_recall,
            _recall(stems, weight_list, all_pool),
            novel_exact if novel_mask.any() else 1.0,
            _recall(stems, novel_list, all_pool) if novel_mask.any() else 1.0,
            soft_best,
            soft_novel if novel_mask.any() else 1.0,
            max_missing,
            float(min(len(missing_quantities), 2)),
            float(bool(said)),
            float(min(len(missing_names), 3)),
            len(missing_names) / len(names) if names else 0.0,
            float(min(len(elsewhere), 2)),
            sentence_recall if flip else 0.0,
            rest_match if opposites else 0.0,
        )
        return Evidence(
            features=features,
            best_window=window,
            supporting_nodes=supporting,
            missing_words=tuple(s for s, _ in sorted(missing, key=lambda sw: -sw[1])[:3]),
            missing_numbers=tuple(q.text for q in missing_quantities),
            window_numbers=said,
            missing_entities=missing_names,
            elsewhere_entities=tuple(elsewhere),
            antonyms=opposites,
            rest_match=rest_match,
            window_names_others=names_others,
            negation_flip=flip and sentence_recall >= 0.5,
            restates_question=bool(stems) and not novel_mask.any(),
        )

    def _names(self, claim: str, question: str) -> list[str]:
        asked_lower = question.lower()
        return [e for e in entities(claim, common=self.idf.common) if e.lower() not in asked_lower]

    @staticmethod
    def _matches(
        surface: list[str], stems: list[str], softable: np.ndarray, window: Window, pool: frozenset[str]
    ) -> np.ndarray:
        """Per claim word: 1 when its stem is in the window's pool, else its soft match (common words)."""
        matches = np.array([1.0 if s in pool else 0.0 for s in stems])
        todo = [i for i in range(len(stems)) if matches[i] < 1.0 and softable[i]]
        if todo:
            window_words, window_vectors = _window_words(window.text)
            if window_words:
                soft = alignment.soft_matches(alignment.vectors([surface[i] for i in todo]), window_vectors)
                matches[todo] = soft
        return matches

    @staticmethod
    def _antonyms(surface: list[str], stems: list[str], window: Window | None) -> tuple[tuple[str, str], ...]:
        """Claim words facing their antonym in the window ('always refundable' vs 'not refundable'
        is negation; 'increased' vs 'decreased' is this)."""
        if window is None:
            return ()
        window_words, _ = _window_words(window.text)
        found = []
        for word, s in zip(surface, stems, strict=True):
            if s in window.stems:
                continue
            found += [
                (word, other) for other in window_words if antonym(word, other) and other not in surface
            ]
        return tuple(found[:3])

    @staticmethod
    def _swapped_names(names: list[str], missing: tuple[str, ...], best: Window | str | None) -> list[str]:
        """Names of the claim found in the references but not in its best window. Called only when
        that window names someone else instead ('Saturn is the largest' against 'Jupiter is the
        largest'): a window naming nobody is just a coreference ('The tower is 330 metres tall')."""
        if best is None:
            return []
        window = (best if isinstance(best, str) else best.text).lower()
        return [e for e in names if e not in missing and e.lower() not in window]

    def _names_others(self, claim: str, window: Window | str) -> bool:
        lowered, text = claim.lower(), window if isinstance(window, str) else window.text
        return any(n.lower() not in lowered for n in entities(text, common=self.idf.common))

    @staticmethod
    def _entity_found(entity: str, refs: References) -> bool:
        if entity.lower() in refs.lowered:
            return True
        parts = content_stems(entity)
        return bool(parts) and all(p in refs.all_stems for p in parts)
