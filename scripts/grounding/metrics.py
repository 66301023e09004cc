"""AUROC, balanced accuracy, calibration error (`scripts.offline_training`'s, labels first), the
threshold that maximises balanced accuracy, and the word-overlap baseline.

Shared by the validation and build scripts and `benchmarks/grounding_model.py`; labels are 1 = supported.
"""

from __future__ import annotations

import numpy as np

from evaluators.offline.text import stems_of
from scripts import offline_training as training
from scripts.grounding.examples import Example


def auroc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney U, ties counted half)."""
    return training.auroc(scores, labels)


def balanced_accuracy(labels: np.ndarray, predicted: np.ndarray) -> float:
    return training.balanced_accuracy(predicted, labels)


def ece(labels: np.ndarray, probabilities: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of P(supported) over equal-width bins."""
    return training.expected_calibration_error(
        np.asarray(probabilities, dtype=float), np.asarray(labels), bins
    )


def best_threshold(values: np.ndarray, labels: np.ndarray) -> tuple[float, int]:
    """Threshold and direction (+1: higher means supported) maximising balanced accuracy."""
    values, labels = np.asarray(values, dtype=float), np.asarray(labels, dtype=int)
    best = (-1.0, 0.5, 1)
    candidates = np.unique(values)
    if len(candidates) > 400:
        candidates = np.quantile(values, np.linspace(0, 1, 401))
    for direction in (1, -1):
        for t in candidates:
            score = balanced_accuracy(labels, (direction * values >= direction * t).astype(int))
            if score > best[0]:
                best = (score, float(t), direction)
    return best[1], best[2]


def overlap(ex: Example) -> float:
    """Share of the answer's content words found in the passages (the baseline)."""
    claim = set(stems_of(ex.claim))
    found = set().union(*(stems_of(p) for p in ex.passages)) if ex.passages else set()
    return len(claim & found) / len(claim) if claim else 1.0


def baseline_split_half(values: np.ndarray, labels: np.ndarray, seed: int = 0) -> float:
    """Balanced accuracy with a threshold fitted on one half and measured on the other (both ways, mean)."""
    idx = np.random.default_rng(seed).permutation(len(values))
    a, b = idx[: len(idx) // 2], idx[len(idx) // 2 :]
    out = []
    for fit, test in ((a, b), (b, a)):
        t, d = best_threshold(values[fit], labels[fit])
        out.append(balanced_accuracy(labels[test], (d * values[test] >= d * t).astype(int)))
    return float(np.mean(out))
