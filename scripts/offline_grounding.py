"""Fitting the grounding and contradiction models (training time only; see train_offline_judge.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from evaluators.offline.features import FEATURE_NAMES, GroundingFeaturizer
from evaluators.offline.model import GatedModel, LogisticModel, fit_logistic
from evaluators.offline.trees import BoostedTrees, TreeNode
from scripts.offline_synthetic import SyntheticAnswer
from scripts.offline_training import (
    Labelled,
    answer_scores,
    auroc,
    claim_evidence,
    claim_matrix,
    weakest_claims,
)

# The trees' shape, chosen on validation data only (a fifth of the QA training pairs held back, and
# HaluEval dialogue's training split, which grounding never trains on), 2026-11-25: depth 4 and 100
# trees at rate 0.1 ranked dialogue at 0.706 AUROC, depth 3 at 0.696, stumps (depth 1, 300 trees) at
# 0.667, the logistic regression at 0.626; QA 0.943-0.945 for every shape.
TREES = {"max_depth": 4, "max_iter": 100, "learning_rate": 0.1, "min_samples_leaf": 50}


def fit_grounding(
    groups: Sequence[tuple[Sequence[Labelled], float]], featurizer: GroundingFeaturizer
) -> GatedModel:
    """P(supported) of a claim, from groups of labelled answers each given a share of the total
    weight (so a small real dataset counts as much as a large synthetic one). An answer is labelled
    as a whole, so each contributes its weakest claim (found by a first fit on all claims). Both
    stages of the `GatedModel` are fitted so, on the same answers; the verdict threshold is the
    logistic regression's."""
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
    decides = fit_logistic(weakest_claims(matrices, first), labels, FEATURE_NAMES, sample_weight=weights)
    threshold = operating_point(answer_scores(matrices, decides), labels, weights)
    first_trees = fit_trees(all_rows, row_labels, row_weights)
    orders = fit_trees(weakest_claims(matrices, first_trees), labels, weights)
    sizes = " + ".join(f"{len(g)} ({share:.0%})" for g, share in groups)
    print(f"grounding: {sizes} answers, {len(all_rows)} claims; verdict threshold {threshold:.3f}")
    return GatedModel(dataclasses.replace(decides, threshold=threshold), orders)


def fit_trees(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> BoostedTrees:
    """Boosted trees by scikit-learn (deterministic: no early stopping, no sampling), read into the
    numpy form the package runs. The reading is checked against scikit-learn's own probabilities."""
    from sklearn.ensemble import HistGradientBoostingClassifier  # training only: `pip install .[train]`

    fitted = HistGradientBoostingClassifier(**TREES, early_stopping=False, random_state=0)
    fitted.fit(x, y, sample_weight=weights)
    trees: list[list[TreeNode]] = [
        [
            (
                int(n["feature_idx"]),
                float(n["num_threshold"]),
                -1 if n["is_leaf"] else int(n["left"]),
                int(n["right"]),
                float(n["value"]),
            )
            for n in predictor.nodes
        ]
        for (predictor,) in fitted._predictors  # (scikit-learn keeps its trees here, one per iteration)
    ]
    bias = float(np.ravel(fitted._baseline_prediction)[0])
    model = BoostedTrees.from_nodes(FEATURE_NAMES, bias, trees, int(TREES["max_depth"]))
    drift = np.abs(model.probabilities(x) - fitted.predict_proba(x)[:, 1]).max()
    if drift > 1e-6:
        raise RuntimeError(f"boosted trees read wrong from scikit-learn: probabilities differ by {drift}")
    return model


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
