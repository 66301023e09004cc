"""A large synthetic grounding set: grounded answers from HaluEval passages and their rewrites.

    python -m scripts.offline_synthetic [limit]   # counts and examples of every kind, to eyeball

HaluEval alone teaches the offline judge little about the failures that matter in production: a
changed number, date, unit or name, a flipped polarity, an antonym, an added detail, and the reverse
mistake, calling a correct paraphrase unsupported. Here a 1-2 sentence answer is taken verbatim
from a passage (QA Wikipedia paragraphs, dialogue knowledge-graph facts, news articles), then
rewritten in ways that keep it supported (label 1: paraphrases of words, numbers, units, dates and
clause order, a dropped detail, a true abstention) or not (label 0: contradictions, unsupported
additions, a false abstention). Each base contributes as many supported as unsupported answers,
with the rarest applicable kinds first, so labels are balanced and no kind dominates.

Deterministic for a (limit, seed): documents come in a seeded order, every passage has its own
seeded random generator, and a smaller limit gives a prefix of a larger one. Training time only
(scripts/train_offline_judge.py); nothing here ships or runs in the judge.
"""

from __future__ import annotations

import itertools
import random
import re
import sys
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scripts.offline_paraphrase import (
    date_paraphrase,
    drop_detail,
    number_paraphrase,
    reorder,
    synonym_paraphrase,
    unit_paraphrase,
)
from scripts.offline_perturb import antonym_swap, date_swap, entity_swap, negation, number_swap, unit_swap
from scripts.offline_quantities import DATE, NUMBER, QUANTITY, Change
from scripts.offline_scene import Scene, name_kind, names_of
from scripts.offline_sources import ROLES, SOURCES, Passage, passages
from scripts.offline_unsupported import abstention, addition, invented_addition

REWRITES: dict[str, Callable[[str, random.Random], Change]] = {
    "paraphrase": synonym_paraphrase,
    "number_paraphrase": number_paraphrase,
    "unit_paraphrase": unit_paraphrase,
    "date_paraphrase": date_paraphrase,
    "reorder": reorder,
    "drop_detail": drop_detail,
}
PERTURBATIONS: dict[str, Callable[[str, Scene, random.Random], Change]] = {
    "number_swap": number_swap,
    "date_swap": date_swap,
    "unit_swap": unit_swap,
    "entity_swap": entity_swap,
    "negation": negation,
    "antonym": antonym_swap,
    "addition": addition,
    "invented_addition": invented_addition,
}
SUPPORTED_KINDS = ("extract", *REWRITES, "abstention_true")
UNSUPPORTED_KINDS = (*PERTURBATIONS, "abstention_false")
CONTRADICTING = frozenset({"number_swap", "date_swap", "unit_swap", "entity_swap", "negation", "antonym"})
PER_BASE = 2  # supported and unsupported answers made from each grounded answer
_PREDICATE = re.compile(
    r"^(?:[A-Z][\w.'-]*\s+){1,3}(?P<pred>(?:won|became|made|wrote|starred|directed|played|joined|moved|founded"
    r"|received|released|scored|signed|led|served|worked|published|recorded|studied|married)\b[^,;]{10,90}\.)$"
)


@dataclass(frozen=True, slots=True)
class SyntheticAnswer:
    """One labelled answer. `contradicted`: it conflicts with the context (a swap, a negation, an
    antonym), as opposed to adding what the context does not say (additions, false abstentions)."""

    context: str
    question: str
    answer: str
    label: int  # 1 supported, 0 not
    kind: str
    contradicted: bool
    source: str  # halueval_qa | halueval_dialogue | news
    document: str  # the source document ('news:301'): the unit of the split
    split: str  # train | test (about one document in five is held out)
    base: str  # the grounded answer this one was made from
    change: str  # what was changed, for a reviewer

    @property
    def domain(self) -> str:
        return self.source


class _Pools:
    """Names, sentences and predicates of documents already visited, per (source, split), so a
    swap or an addition borrows from another document and never across the split."""

    def __init__(self) -> None:
        self.names: dict[tuple[str, str], dict[str, deque[tuple[str, str]]]] = defaultdict(
            lambda: defaultdict(lambda: deque(maxlen=400))
        )
        self.sentences: dict[tuple[str, str], deque[tuple[str, str]]] = defaultdict(lambda: deque(maxlen=300))
        self.predicates: dict[tuple[str, str], deque[tuple[str, str]]] = defaultdict(
            lambda: deque(maxlen=300)
        )

    def scene(self, p: Passage, question: str) -> Scene:
        key = (p.source, p.split)
        own = [(n, name_kind(n, p.context)) for n in names_of(p.context)]
        pairs: frozenset[frozenset[str]] = frozenset()
        if p.facts:  # typed names: a person for a person, a film for a film
            own = [(f.value, ROLES[f.relation]) for f in p.facts] + [(f.work, "work") for f in p.facts]
            own = [(n, k) for n, k in dict.fromkeys(own) if k not in ("year", "class")]
            pairs = frozenset(frozenset((f.work, f.value)) for f in p.facts)
        others = {kind: _recent(pool, p.document, 120) for kind, pool in self.names[key].items()}
        sentences = _recent(self.sentences[key], p.document, 40)
        predicates = _recent(self.predicates[key], p.document, 40)
        return Scene(p.context, question, own, others, sentences, predicates, pairs)

    def add(self, p: Passage, scene: Scene) -> None:
        key = (p.source, p.split)
        for name, kind in dict.fromkeys(scene.names):
            self.names[key][kind].append((p.document, name))
        for sentence in p.answers:
            self.sentences[key].append((p.document, sentence))
            if m := _PREDICATE.match(sentence):
                self.predicates[key].append((p.document, m["pred"]))


def _recent(pool: deque[tuple[str, str]], document: str, n: int) -> list[str]:
    """The last `n` items of a pool that come from another document."""
    return [item for d, item in itertools.islice(reversed(pool), n) if d != document]


def _base(p: Passage, rng: random.Random) -> str:
    """One answer sentence of the passage, or two that follow each other in it (three times in ten).
    Sentences with a quantity, a number or a date are preferred: they are where answers go wrong."""
    weights = [1 + 3 * bool(QUANTITY.search(a)) + bool(NUMBER.search(a) or DATE.search(a)) for a in p.answers]
    i = rng.choices(range(len(p.answers)), weights)[0]
    first = p.answers[i]
    if i + 1 < len(p.answers) and rng.random() < 0.3:
        second = p.answers[i + 1]
        if f"{first} {second}" in p.context:
            return f"{first} {second}"
    return first


def _question(p: Passage, base: str) -> str:
    if p.question:
        return p.question
    names = names_of(base, p.context)
    return f"What does the article say about {names[0]}?" if names else "What does the article report?"


def _from_passage(p: Passage, seed: int, pools: _Pools, counts: Counter[str]) -> list[SyntheticAnswer]:
    rng = random.Random(f"{seed}:{p.document}:{p.context[:80]}")
    base = _base(p, rng)
    question = _question(p, base)
    scene = pools.scene(p, question)
    made: dict[str, tuple[str, str, str]] = {"extract": (base, question, "verbatim")}
    for kind, rewrite in REWRITES.items():
        if (new := rewrite(base, rng)) and new[0] != base:
            made[kind] = (new[0], question, new[1])
    for kind, perturb in PERTURBATIONS.items():
        if (new := perturb(base, scene, rng)) and new[0] != base:
            made[kind] = (new[0], question, new[1])
    for kind, true in (("abstention_true", True), ("abstention_false", False)):
        if found := abstention(p, base, scene, rng, true=true):
            made[kind] = (found[0], found[1], f"topic: {found[2]}")
    pools.add(p, scene)
    supported = [k for k in SUPPORTED_KINDS if k in made]
    unsupported = [k for k in UNSUPPORTED_KINDS if k in made]
    n = min(PER_BASE, len(supported), len(unsupported))
    chosen: list[str] = []
    for kinds in (supported, unsupported):
        chosen += sorted(kinds, key=lambda k: (counts[k], rng.random()))[:n]
    out = []
    for kind in chosen:
        counts[kind] += 1
        answer, asked, change = made[kind]
        label = int(kind in SUPPORTED_KINDS)
        out.append(SyntheticAnswer(p.context, asked, answer, label, kind, kind in CONTRADICTING,
                                   p.source, p.document, p.split, base, change))  # fmt: skip
    return out


def _stream(source: str, seed: int, pools: _Pools, counts: Counter[str]) -> Iterator[list[SyntheticAnswer]]:
    for p in passages(source, seed):
        if batch := _from_passage(p, seed, pools, counts):
            yield batch


def synthetic_set(limit: int, seed: int = 7) -> list[SyntheticAnswer]:
    """`limit` labelled answers (fewer if the sources run out: about 170,000 are available), about
    a third from each source while they last, half supported. Filter on `split` to train or to evaluate."""
    pools, counts = _Pools(), Counter[str]()
    streams = {source: _stream(source, seed, pools, counts) for source in SOURCES}
    emitted = dict.fromkeys(SOURCES, 0)
    out: list[SyntheticAnswer] = []
    while len(out) < limit and streams:
        source = min(streams, key=lambda s: emitted[s])
        batch = next(streams[source], None)
        if batch is None:
            del streams[source]
            continue
        out += batch
        emitted[source] += len(batch)
    return out[:limit]


def _report(items: list[SyntheticAnswer], seconds: float) -> None:
    print(f"{len(items)} answers in {seconds:.1f} s")
    for name, key in (
        ("label", lambda a: a.label),
        ("split", lambda a: a.split),
        ("source", lambda a: a.source),
    ):
        print(f"{name}: {dict(sorted(Counter(key(a) for a in items).items()))}")
    print("contradicted:", sum(a.contradicted for a in items))
    kinds = Counter(a.kind for a in items)
    for kind in (*SUPPORTED_KINDS, *UNSUPPORTED_KINDS):
        print(f"  {kind:18s} {kinds[kind]:6d}")
    rng = random.Random(0)
    for kind in (*SUPPORTED_KINDS, *UNSUPPORTED_KINDS):
        examples = [a for a in items if a.kind == kind]
        print(f"\n=== {kind} (label {1 if kind in SUPPORTED_KINDS else 0})")
        for a in rng.sample(examples, min(3, len(examples))):
            print(f"  [{a.source} {a.split}] Q: {a.question[:100]}")
            print(f"    base:   {a.base}")
            print(f"    answer: {a.answer}")
            print(f"    change: {a.change}")


if __name__ == "__main__":
    started = time.perf_counter()
    answers = synthetic_set(int(sys.argv[1]) if len(sys.argv) > 1 else 60000)
    _report(answers, time.perf_counter() - started)
