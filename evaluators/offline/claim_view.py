"""The claim's side of the grounding features, read once per (claim, question) and cached.

Faithfulness judges each claim against all passages; hallucination then judges each passage against
each claim, so one record asks for a claim's evidence 1 + N_passages times. Reading the claim (its
words, stems, IDF weights, quantities and names) for every pair was half of the judge's time.
`claim_view` reads it once. `Terms` are the words it is matched by, which depend on the passages only
through the quantities they support (a supported amount is matched whole: its words leave the word
features and it becomes one '#amount' token); a claim has a handful of such variants. Which of its
quantities a text states is found once per (claim, sentence) and kept as bits: a pair window's or a
passage's are its sentences' OR-ed, since they read as their sentences (`quantities.reads_apart`).
Every value is computed as `GroundingFeaturizer.evidence` always computed it (same operations, same
order, the same sums): a verdict cannot change with the cache.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, count

import numpy as np

from evaluators.offline.idf import IdfTable
from evaluators.offline.negation import negation_count
from evaluators.offline.quantities import Quantity, quantities, supports
from evaluators.offline.text import content_words, entities, is_content, stem, stems_of, words

_CLAUSE_WORDS = 4  # shorter claims are answer fragments: negation and antonyms are not compared
_CAPITALISED_WORD = re.compile(r"\b[A-Z]\w*")  # (a name's words do not decide which clause it is about)
# One more member of a list the passage gives part of, said ('Joe Turkel also starred in The Shining')
# or in a relation that holds many: a cast (either way), what a whole includes, a membership
# ('Windtalkers is starring Frances O'Connor' beside 'Noah Emmerich starred in Windtalkers'; 'The
# panel includes Dr Lee'). Not the part's side of inclusion: a song 'included in' another album than
# the passage's is a swap. The relation words in lower case only ('Star Wars' is a name).
_ADDITIVE = re.compile(
    r"\b(?:also|as well(?! as)|another|besides|additionally|in addition)\b|\btoo[.!?]*$"
    r"|(?-i:\b(?:(?:co-?)?star(?:s|red|ring)?|cast|featur(?:e|es|ing)|includ(?:e|es|ing)|among|members?"
    r"|one of)\b|\b(?:featured|included)\b(?!\s+in\b))",
    re.IGNORECASE,
)
_COMPOUND = re.compile(r"\b[a-z]+(?:-[a-z]+)+\b")  # 'in-sync', 'state-of-the-art' (not 'covid-19')


@dataclass(frozen=True, slots=True, eq=False)  # eq=False: hashed by identity, as a cache key
class ClaimView:
    """What a claim brings to every comparison, whatever the passages."""

    claim: str
    idf: IdfTable
    quantities: tuple[Quantity, ...]  # all of the claim's numbers, amounts and dates
    quantity_words: tuple[frozenset[str], ...]  # the words of each
    checked_rows: tuple[int, ...]  # positions in `quantities` of those the question does not state
    checked: tuple[Quantity, ...]  # ... and the quantities themselves
    content: tuple[str, ...]  # content words, first occurrences in order
    asked: frozenset[str]  # the question's content stems
    asked_negated: bool  # the question states a negation ('What section was never completed?')
    names: tuple[str, ...]  # names the question does not give, dates excepted
    name_words: frozenset[str]
    capitalised: frozenset[str]  # stems of the claim's capitalised words
    clause: bool  # long enough for negation and antonyms to be compared
    compounds: tuple[tuple[str, str], ...]  # (stem of a hyphenated word's part, stem of the joined word)
    negation_parity: int
    additive: bool  # adds a member to what is known ('also', 'another'; 'starring', 'includes')

    def terms(self, supported: tuple[bool, ...]) -> Terms:
        """The words matched one by one when the quantities of `checked` flagged here are supported."""
        return _terms(self, supported)


@lru_cache(maxsize=1024)
def claim_view(claim: str, question: str, idf: IdfTable) -> ClaimView:
    asked_quantities = quantities(question) if question else ()
    found = quantities(claim)
    dated = {w for q in found for w in words(q.text)}  # 'March 1889' is a date, not a name
    asked_lower = question.lower()
    names = tuple(
        n
        for n in entities(claim, common=idf.common)
        if n.lower() not in asked_lower and not set(words(n)) <= dated
    )
    checked_rows = tuple(i for i, q in enumerate(found) if not any(supports(a, q) for a in asked_quantities))
    return ClaimView(
        claim=claim,
        idf=idf,
        quantities=found,
        quantity_words=tuple(frozenset(words(q.text)) for q in found),
        checked_rows=checked_rows,
        checked=tuple(found[i] for i in checked_rows),
        content=tuple(dict.fromkeys(content_words(claim))),
        asked=frozenset(stems_of(question)) if question else frozenset(),
        asked_negated=bool(question) and negation_count(question) % 2 == 1,
        names=names,
        name_words=frozenset(w for n in names for w in words(n)),
        capitalised=frozenset(stem(w) for w in _CAPITALISED_WORD.findall(claim)),
        clause=len(claim.split()) >= _CLAUSE_WORDS,
        compounds=compounds(claim),
        negation_parity=negation_count(claim) % 2,
        additive=_ADDITIVE.search(claim) is not None,
    )


def compounds(claim: str) -> tuple[tuple[str, str], ...]:
    """(part, joined) stems of the claim's hyphenated words: a text that writes 'in-sync' as one word
    ('min.insync.replicas') states 'sync'. The parts still match on their own ('in sync')."""
    found = []
    for compound in _COMPOUND.findall(claim.lower()):
        joined = stem(compound.replace("-", ""))
        found += [(stem(w), joined) for w in compound.split("-") if is_content(w)]
    return tuple(dict.fromkeys(found))


def with_compounds(view: ClaimView, stems: frozenset[str]) -> frozenset[str]:
    """A text's stems plus the claim's compound parts whose joined word the text holds."""
    found = {part for part, joined in view.compounds if joined in stems and part not in stems}
    return stems | found if found else stems


def stated_in(view: ClaimView, parts: tuple[str, ...], rows: tuple[int, ...]) -> tuple[bool, ...]:
    """Per quantity of the claim at `rows` (positions in `view.quantities`): whether a quantity of the
    text made of `parts` states it (`Window.parts`, `passage_parts`: a text's quantities are its
    sentences' when they read apart, so each sentence is read and compared once per claim)."""
    if not rows:
        return ()
    stated = 0
    for part in parts:
        stated |= _stated(view, part)
    if not stated:  # most texts state none of a claim's quantities
        return (False,) * len(rows)
    return tuple([stated >> i & 1 == 1 for i in rows])


@lru_cache(maxsize=4096)
def _stated(view: ClaimView, text: str) -> int:
    """The claim's quantities that a quantity of `text` states, as bits (bit i: `view.quantities[i]`)."""
    found = quantities(text)
    bits = 0
    if found:
        for i, q in enumerate(view.quantities):
            for r in found:
                if supports(r, q):
                    bits |= 1 << i
                    break
    return bits


def supported_in(view: ClaimView, parts: tuple[str, ...]) -> tuple[bool, ...]:
    """Per quantity of `view.checked`: whether a quantity of the text made of `parts` states it."""
    return stated_in(view, parts, view.checked_rows)


@dataclass(frozen=True, slots=True, eq=False)
class Terms:
    """A claim's words (and supported amounts) as matched against passages, with their IDF
    weights; read-only arrays."""

    view: ClaimView
    surface: tuple[str, ...]  # content words, then one '#<amount>' token per supported amount
    stems: tuple[str, ...]
    amounts: tuple[str, ...]  # one token per supported amount, in order
    amount_rows: tuple[int, ...]  # the row of each one's quantity in `view.quantities`
    amount_tokens: frozenset[str]
    weights: np.ndarray
    novel_mask: np.ndarray  # not already in the question
    softable: tuple[bool, ...]  # may be matched by a synonym (not a number, a name or an amount)
    soft_words: tuple[str, ...]  # the surface of those words, in order
    soft_at: tuple[int, ...]  # per word, its position in `soft_words` (-1: not softable)
    weight_list: tuple[float, ...]  # `weights` as Python floats (exact recalls sum them in order)
    novel_list: tuple[float, ...]  # the weight of each novel word, 0.0 for the others
    word_list: tuple[float, ...]  # the weight of each word, 0.0 for the amounts (they may be swapped)
    total: float
    novel_total: float
    word_total: float
    novel: bool  # some word is novel
    soft_total: float  # the weights summed as numpy sums them (soft recalls divide by it)
    novel_weights: np.ndarray | None  # the novel words' weights, None when every word is novel
    novel_soft_total: float

    def recall(self, pool: frozenset[str], *, novel: bool = False) -> float:
        """IDF-weighted share of the (novel) words whose stem is in `pool`."""
        if novel:
            return _recall(self.stems, self.novel_list, self.novel_total, pool)
        return _recall(self.stems, self.weight_list, self.total, pool)

    def recalls(self, pool: frozenset[str]) -> tuple[float, float, float]:
        """(`recall`, novel `recall`, word recall) in `pool`, each stem looked up once: the same weights
        summed in the same order as `recall` sums them. The word recall weighs the amounts 0.0 (they
        may be swapped)."""
        found = [s in pool for s in self.stems]
        return (
            sum(compress(self.weight_list, found)) / self.total if self.total > 0.0 else 1.0,
            sum(compress(self.novel_list, found)) / self.novel_total if self.novel_total > 0.0 else 1.0,
            sum(compress(self.word_list, found)) / self.word_total if self.word_total > 0.0 else 1.0,
        )

    def soft_recall(self, matches: np.ndarray) -> float:
        """Weighted share of the words matched (0..1 each; `matches` aligned with the words)."""
        return float(self.weights @ matches) / self.soft_total if self.soft_total > 0 else 1.0

    def soft_novel_recall(self, matches: np.ndarray) -> float:
        if self.novel_weights is None:
            return self.soft_recall(matches)
        total = self.novel_soft_total
        return float(self.novel_weights @ matches[self.novel_mask]) / total if total > 0 else 1.0

    def pool(self, stems: frozenset[str], parts: tuple[str, ...]) -> frozenset[str]:
        """A text's stems plus the claim's compound parts it writes joined (`with_compounds`) and the
        tokens of the claim's amounts that it (made of `parts`) states."""
        if self.view.compounds:
            stems = with_compounds(self.view, stems)
        if not self.amounts:
            return stems
        stated = stated_in(self.view, parts, self.amount_rows)
        if not any(stated):
            return stems
        return stems | {t for t, ok in zip(self.amounts, stated, strict=True) if ok}


def _recall(stems: tuple[str, ...], weights: tuple[float, ...], total: float, pool: frozenset[str]) -> float:
    if total <= 0.0:
        return 1.0
    return sum(w for s, w in zip(stems, weights, strict=True) if s in pool) / total


@lru_cache(maxsize=1024)
def _terms(view: ClaimView, supported: tuple[bool, ...]) -> Terms:
    missing = [q for q, ok in zip(view.checked, supported, strict=True) if not ok]
    found = [i for i, q in enumerate(view.quantities) if q not in missing]
    matched = {w for i in found for w in view.quantity_words[i]}
    surface = [w for w in view.content if w not in matched]
    stems = [stem(w) for w in surface]
    weight_of = [view.idf.weight(s) for s in stems]
    novel = [s not in view.asked for s in stems]
    amounts = {f"#{view.quantities[i].text}": i for i in found}
    for token, row in amounts.items():
        q = view.quantities[row]
        surface.append(token)
        stems.append(token)
        weight_of.append(max((view.idf.weight(stem(w)) for w in words(q.text)), default=1.0))
        novel.append(q in view.checked)
    weights = np.array(weight_of, dtype=float)
    novel_mask = np.array(novel, dtype=bool)
    weight_list, novel_list = tuple(weights.tolist()), tuple((weights * novel_mask).tolist())
    word_list = tuple(0.0 if s in amounts else w for s, w in zip(stems, weight_list, strict=True))
    novel_weights = None if novel_mask.all() else weights[novel_mask]
    softable = tuple(not w[0].isdigit() and w not in view.name_words and w not in amounts for w in surface)
    position = count()
    for array in (weights, novel_mask, novel_weights):
        if array is not None:
            array.setflags(write=False)
    return Terms(
        view=view,
        surface=tuple(surface),
        stems=tuple(stems),
        amounts=tuple(amounts),
        amount_rows=tuple(amounts.values()),
        amount_tokens=frozenset(amounts),
        weights=weights,
        novel_mask=novel_mask,
        softable=softable,
        soft_words=tuple(compress(surface, softable)),
        soft_at=tuple(next(position) if ok else -1 for ok in softable),
        weight_list=weight_list,
        novel_list=novel_list,
        word_list=word_list,
        total=sum(weight_list),
        novel_total=sum(novel_list),
        word_total=sum(word_list),
        novel=bool(novel_mask.any()),
        soft_total=float(weights.sum()),
        novel_weights=novel_weights,
        novel_soft_total=float(novel_weights.sum()) if novel_weights is not None else 0.0,
    )
