"""Grounding features of one claim against the retrieved nodes, with the evidence behind them.

Each feature is a reason a person would give: the claim's rare words are (not) in the context, or
only as synonyms; a number, date or name of the claim is missing, or the best-matching passage
states another one; that passage says the opposite (negation, an antonym); the claim merely
restates the question. The evidence is kept so that a verdict can name what failed and where.
The claim's side is read once (`claim_view`) and scored against each passage once (`passage_match`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evaluators.offline.claim_view import ClaimView, claim_view, supported_in, with_compounds
from evaluators.offline.idf import IdfTable, default_idf
from evaluators.offline.passage_match import (
    antonyms,
    clause_of,
    one_side_denies,
    passage_scores,
    passage_stems,
    soft_scores,
)
from evaluators.offline.polarity import (
    denies_other,
    kind_opposites,
    negation_agrees,
    sentence_antonyms,
)
from evaluators.offline.quantities import Quantity, conflicts
from evaluators.offline.sentences import Window, passage_parts, windows
from evaluators.offline.slots import others, rivalled, swapped_names
from evaluators.offline.text import stem, stems_of, words

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
_OWN_SENTENCE = 0.8  # polarity is compared with a sentence matching this share of the best window's recall
# What the window need not match for a conflict: words that vouch for a claim and state nothing ('Shelden
# Williams was actually born in New York City' against 'Oklahoma City : Place of birth'), and the 'ago'
# of a time the window gives as a date ('released five years ago in 2003' against '2002'), and 'one' (a
# pronoun, 'Jamie Foxx starred in that one'; as a number it is a quantity, compared as one).
_NEED_NOT_MATCH = frozenset(
    map(stem, "actually really definitely certainly indeed truly honestly basically ago one".split())  # noqa: SIM905
)
# Soft recalls this close are a tie (kept: the window with the better exact recall, then the tighter one).
# Windows with the same best words differ only by float32 rounding, which depends on the shape of each
# product (BLAS picks its kernels by CPU): without this, the CPU would choose the window a reason quotes.
_SOFT_TIE = 1e-6


@dataclass(frozen=True, slots=True)
class References:
    """The retrieved nodes, pre-tokenised once and shared by all claims of a case."""

    texts: tuple[str, ...]
    windows: tuple[Window, ...]
    all_stems: frozenset[str]
    lowered: str


@lru_cache(maxsize=256)  # per record's passages: the windows of all its nodes (docs/offline-judge.md, Memory)
def prepare(texts: tuple[str, ...]) -> References:
    return References(
        texts=texts,
        windows=tuple(w for i, t in enumerate(texts) for w in windows(t, i)),
        all_stems=frozenset().union(*(passage_stems(t) for t in texts)),
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
    window_numbers: tuple[str, ...] = ()  # the conflicting values the best window states
    contested_numbers: tuple[str, ...] = ()  # the claim's values they contradict
    # Where they are: the best window, or the sentence matching the rest of the claim (a value moved
    # there from elsewhere in the context).
    conflict_window: Window | None = None
    missing_entities: tuple[str, ...] = ()
    elsewhere_entities: tuple[str, ...] = ()  # in the references, but not in the best window
    antonyms: tuple[tuple[str, str], ...] = ()  # (claim word, window word)
    rest_match: float = 0.0  # best-window soft recall of the claim without its missing names and numbers
    window_names_others: bool = False  # the best window names someone or something the claim does not
    additive: bool = False  # the claim adds a member to what is known ('also'; 'starring', 'includes')
    # Of a claim and its best sentence, one negated: the negation denies something of a name the
    # other does not state ('not open on Sundays' against 'open Monday to Friday': other days).
    denies_another: bool = False
    rivalled: bool = False  # another name stands where a swapped one stands in the claim (`slots`)
    negation_flip: bool = False
    restates_question: bool = False

    @property
    def has_conflict(self) -> bool:
        """A specific contradiction, not mere absence: the best window matches the rest of the claim
        but states another number, another name, or the opposite (negation, an antonym)."""
        swapped_number = bool(self.window_numbers) and self.rest_match >= 0.5
        # A name found elsewhere in the context but not here, where another stands in its place
        # (`slots`), is a swap; a name found nowhere is one only when it is the claim's single gap and
        # the claim does not say it adds one ('X also starred in Y'): else it is an addition.
        swapped = bool(self.elsewhere_entities) and self.rest_match >= 0.6 and self.rivalled
        invented = (
            bool(self.missing_entities)
            and self.window_names_others
            and self.rest_match >= 0.9
            and not self.additive
            and not self.denies_another
        )
        swapped_name = swapped or invented
        return swapped_number or swapped_name or self.negation_flip or bool(self.antonyms)


class GroundingFeaturizer:
    """Turns (claim, references, question) into the feature vector of the grounding model."""

    def __init__(self, idf: IdfTable | None = None) -> None:
        self.idf = idf or default_idf()

    def evidence(self, claim: str, refs: References, question: str = "") -> Evidence:
        view = claim_view(claim, question, self.idf)
        supported = _supported(view, refs.texts)
        missing_quantities = [q for q, ok in zip(view.checked, supported, strict=True) if not ok]
        # A supported amount is matched as a whole ('0.33 km' for '330 metres'): its words leave the
        # word features, which would otherwise call '0.33' and 'km' missing, and it counts as one
        # token found where a quantity supports it (so 'came out on September 14, 2023' is judged
        # on the date it states, not on 'came').
        terms = view.terms(supported)
        stems, weights, novel_mask = terms.stems, terms.weights, terms.novel_mask
        all_pool = with_compounds(view, refs.all_stems) if view.compounds else refs.all_stems
        all_pool = all_pool | terms.amount_tokens if terms.amounts else all_pool

        scores = [passage_scores(terms, t) for t in refs.texts]
        restated = frozenset().union(*(p.restated for p in scores))
        all_pool = all_pool | restated if restated else all_pool
        recalls = [r for p in scores for r in p.windows]
        pools = [pool for p in scores for pool in p.pools]
        n_windows = len(recalls)
        best_at = max(range(n_windows), key=recalls.__getitem__, default=None)
        best_recall, best = (recalls[best_at], refs.windows[best_at]) if best_at is not None else (0.0, None)
        # The sentence the claim's words (not its amounts, which may be swapped) match best.
        sentences = [r for p in scores for r in p.sentences]
        sentence_at = max(
            (i for i in range(n_windows) if refs.windows[i].single), key=sentences.__getitem__, default=None
        )
        novel_exact = max((r for p in scores for r in p.novel_windows), default=0.0)
        soft_best, soft_novel, soft_window, soft_per_word = 0.0, 0.0, best, np.zeros(len(stems))
        for i in sorted(range(n_windows), key=lambda i: -recalls[i])[:_SOFT_WINDOWS]:
            soft = soft_scores(terms, refs.windows[i], pools[i])
            if soft_window is None or soft.recall > soft_best + _SOFT_TIE:
                soft_best, soft_window, soft_per_word = soft.recall, refs.windows[i], soft.matches
            soft_novel = max(soft_novel, soft.novel_recall)
        node_recalls = [p.passage for p in scores]
        recall_node = max(node_recalls, default=0.0)
        supporting = tuple(i for i, r in enumerate(node_recalls) if r >= 0.5 and r >= recall_node - 0.15)

        missing = [
            (stems[i], float(weights[i]))
            for i in range(len(stems))
            if novel_mask[i] and stems[i] not in all_pool and soft_per_word[i] < _SOFT_FULL
        ]
        max_missing = max((w for _, w in missing), default=0.0) / self.idf.max_weight

        window = soft_window
        here = refs.windows[sentence_at] if sentence_at is not None else None
        in_window, moved = self._conflicting(view, supported, missing_quantities, window, here)
        conflicting = in_window + moved
        said = tuple(dict.fromkeys(text for _, text in conflicting))
        names = list(view.names)
        missing_names = tuple(e for e in names if not self._entity_found(e, refs))
        clause_text, parities = clause_of(terms, here) if here else (None, frozenset({0}))
        names_others = window is not None and bool(others(claim, window.text, self.idf.common))
        opposed = here is not None and view.negation_parity not in parities
        denies_another = here is not None and opposed and denies_other(view, here.text, self.idf.common)
        elsewhere = swapped_names(names, missing_names, window.text) if window and names_others else []
        swapped_in = window.text if elsewhere and window else ""
        if not elsewhere and clause_text and others(claim, clause_text, self.idf.common):
            elsewhere = swapped_names(names, missing_names, clause_text)
            swapped_in = clause_text
        elsewhere = [] if denies_another else elsewhere
        # Polarity needs a clause: an answer fragment ('sister company', 'no') has none to flip; and
        # a sentence that is the claim's, not one of two it draws on ('Ibuprofen should not be taken
        # by ...' next to 'Taking it with food can reduce stomach upset').
        clause = view.clause
        own = sentence_at is not None and recalls[sentence_at] >= _OWN_SENTENCE * best_recall
        # ('was removed' for 'is no longer available'; 'cannot be done without X' for 'cannot be done')
        agrees = opposed and here is not None and negation_agrees(view, here.text)
        flip = clause and own and opposed and not denies_another and not agrees
        opposites, opposed_in = (antonyms(terms, window), window.text) if clause and window else ((), "")
        if clause and not opposites and here is not None and here is not window and not view.quantities:
            opposites, opposed_in = sentence_antonyms(terms, view, here, window, self.idf.common)
        tied = None  # a window matching the claim's words as well as the best, giving another kind
        if not opposites:  # (a fragment too: "It is horror." against "has genre Drama")
            ties = (w for w, r in zip(refs.windows, recalls, strict=True) if r >= best_recall - _SOFT_TIE)
            tied, opposites = kind_opposites(terms, refs.texts, refs.all_stems, ties)
            opposed_in = tied.text if tied is not None else opposed_in
        # 'not open' against 'closed': two opposites agree (and the negation is no flip)
        agreeing = [p for p in opposites if one_side_denies(p[0], claim, p[1], opposed_in)]
        if agreeing:
            opposites = tuple(p for p in opposites if p not in agreeing)
            flip = flip and bool(opposites)

        failed = {p for name in (*missing_names, *elsewhere) for p in stems_of(name)}
        failed |= {stem(w) for q in missing_quantities for w in words(q.text)}
        failed |= {f"#{q.text}" for q, _ in conflicting}
        failed |= {stem(word) for word, _ in opposites} | _NEED_NOT_MATCH
        rest = np.array([s not in failed for s in stems], dtype=bool)
        if window is None or not rest.any():
            rest_match = 0.0
        elif rest.all():  # the same arrays as the masked ones: the same sums
            rest_match = terms.soft_recall(soft_per_word)
        else:
            rest_match = _soft_recall(weights[rest], soft_per_word[rest])
        sentence_recall = sentences[sentence_at] if sentence_at is not None else 0.0
        recall_all, novel_recall_all, _ = terms.recalls(all_pool)
        features = (
            best_recall,
            recall_all,
            novel_exact if terms.novel else 1.0,
            novel_recall_all if terms.novel else 1.0,
            soft_best,
            soft_novel if terms.novel else 1.0,
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
            contested_numbers=tuple(dict.fromkeys(q.text for q, _ in conflicting)),
            conflict_window=tied or (here if moved and not in_window else window),
            missing_entities=missing_names,
            elsewhere_entities=tuple(elsewhere),
            antonyms=opposites,
            rest_match=rest_match,
            window_names_others=names_others,
            additive=view.additive or self._lists_a_known(missing_names, refs),
            denies_another=denies_another,
            rivalled=bool(elsewhere) and rivalled(claim, elsewhere, swapped_in, self.idf.common),
            negation_flip=flip and sentence_recall >= 0.5,
            restates_question=bool(stems) and not terms.novel,
        )

    @staticmethod
    def _conflicting(
        view: ClaimView,
        supported: tuple[bool, ...],
        missing: list[Quantity],
        window: Window | None,
        here: Window | None,
    ) -> tuple[list[tuple[Quantity, str]], list[tuple[Quantity, str]]]:
        """(claim quantity, value stated instead), in the best window and in the sentence matching the
        rest of the claim: a missing one against the best window's values; and a value the context
        states elsewhere is still swapped when that sentence states another ('4 weeks' before leave,
        where 4 weeks is someone else's)."""
        found = [
            (q, r.text) for q in missing for r in (window.quantities if window else ()) if conflicts(r, q)
        ]
        if here is None:
            return found, []
        stated_here = supported_in(view, here.parts)
        moved = [
            q for q, ok, there in zip(view.checked, supported, stated_here, strict=True) if ok and not there
        ]
        return found, [(q, r.text) for q in moved for r in here.quantities if conflicts(r, q)]

    @classmethod
    def _lists_a_known(cls, missing: tuple[str, ...], refs: References) -> bool:
        """A missing name joins one the context gives with 'and': the claim lists one more beside it
        ('she wrote Gregor the Overlander and Mockingjay' against 'Suzanne Collins wrote Gregor the
        Overlander'), an addition, not a swap."""
        joined = [part for name in missing if " and " in name for part in name.split(" and ")]
        return any(cls._entity_found(part, refs) for part in joined)

    @staticmethod
    def _entity_found(entity: str, refs: References) -> bool:
        if entity.lower() in refs.lowered:
            return True
        parts = stems_of(entity)
        return bool(parts) and all(p in refs.all_stems for p in parts)


def _soft_recall(weights: np.ndarray, matches: np.ndarray) -> float:
    total = float(weights.sum())
    return float(weights @ matches) / total if total > 0 else 1.0


def _supported(view: ClaimView, texts: tuple[str, ...]) -> tuple[bool, ...]:
    """Per quantity the claim checks: whether some passage states it (sentence by sentence where they
    read apart, cached: hallucination asks about each passage alone, and windows share sentences)."""
    if not texts:
        return tuple(False for _ in view.checked)
    return supported_in(view, tuple(p for t in texts for p in passage_parts(t)))
