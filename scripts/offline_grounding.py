"""Fitting the grounding and contradiction models (training time only; see train_offline_judge.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from evaluators.offline.features import FEATURE_NAMES, GroundingFeaturizer
from evaluators.offline.model import LogisticModel, fit_logistic
from scripts.offline_synthetic import SyntheticAnswer
from scripts.offline_training import (
    Labelled,
    answer_scores,
    auroc,
    claim_evidence,
    claim_matrix,
    weakest_claims,
)


def fit_grounding(
    groups: Sequence[tuple[Sequence[Labelled], float]], featurizer: GroundingFeaturizer
) -> LogisticModel:
    """P(supported) of a claim, from groups of labelled answers each given a share of the total
    weight (so a small real dataset counts as much as a large synthetic one). An answer is labelled
    as a whole, so each contributes its weakest claim (found by a first fit on all claims)."""
    items = [a for group, _ in groups for a in group]
    weights = np.concatenate([np.full(len(g), share / len(g)) for g, share in groups]) * len(items)
    matrices = [claim_matrix(a, featurizer) for a in items]
    labels = np.array([a.label for a in items], dtype=float)
    all_rows = np.vstack(matrices)
    row_labels = np.concatenate(
        [np.full(len(m), a.label, dtype=float) for m, a in zip(matrices, items, strict=True)]
    )
    row_weights = np.concatenate([np.full(len(m), w) for m, w in zip(matrices, weights, strict=True)])
    first = fit_logistic(all_rows, row_labels, FEATURE_NAMES, sample_weight=row_weights)
    model = fit_logistic(weakest_claims(matrices, first), labels, FEATURE_NAMES, sample_weight=weights)
    threshold = operating_point(answer_scores(matrices, model), labels, weights)
    sizes = " + ".join(f"{len(g)} ({share:.0%})" for g, share in groups)
    print(f"grounding: {sizes} answers, {len(all_rows)} claims; verdict threshold {threshold:.3f}")
    return dataclasses.replace(model, threshold=threshold)


def operating_point(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> float:
    """The P(supported) above which a claim is called supported: the one that maximises weighted
    balanced accuracy on the training answers (probabilities stay calibrated; only the cut moves)."""
    positive, negative = weights * (labels == 1), weights * (labels == 0)
    best, best_score = 0.5, -1.0
    for t in np.unique(np.round(np.quantile(scores, np.linspace(0.05, 0.95, 91)), 3)):
        called = scores >= t
        score = positive[called].sum() / positive.sum() + negative[~called].sum() / negative.sum()
        if score > best_score:
            best, best_score = float(t), float(score)
    return best


def fit_contradiction(synthetic: list[SyntheticAnswer], featurizer: GroundingFeaturizer) -> LogisticModel:
    """P(contradicted | a specific conflict was found): trained on the claims that show one (another
    number, name, polarity or an antonym), labelled by whether the perturbation contradicts."""
    rows, labels = [], []
    for item in synthetic:
        for ev in claim_evidence(item, featurizer):
            if ev.has_conflict:
                rows.append(ev.features)
                labels.append(float(item.contradicted))
    x, y = np.array(rows, dtype=float), np.array(labels)
    model = fit_logistic(x, y, FEATURE_NAMES)
    print(
        f"contradiction: {len(y)} claims with a conflict, {int(y.sum())} contradicted; "
        f"training AUROC {auroc(model.probabilities(x), y):.3f}"
    )
    return model
