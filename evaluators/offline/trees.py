"""Gradient-boosted regression trees evaluated in numpy: the grounding model's second stage.

The trees are fitted at training time by scikit-learn (scripts/offline_grounding.py) and committed as
JSON numbers, so the package runs them with numpy alone. Why trees at all: see `GatedModel` in
model.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TreeNode = tuple[int, float, int, int, float]  # (feature, split, left child, right child (-1: leaf), value)
_ALWAYS_LEFT = 1e300  # the split of a padding node: no feature value exceeds it


@dataclass(frozen=True, slots=True, eq=False)
class BoostedTrees:
    """P(y=1 | x) = sigmoid(bias + the sum of one leaf value per tree).

    Every tree is stored complete to `depth`, in heap order (node i's children are 2i+1 and 2i+2),
    so all trees walk one level at a time in a few array operations: x goes right at node i when
    x[features[i]] > splits[i]. A leaf that stops short of `depth` is padded with splits that
    always go left to a copy of its value."""

    names: tuple[str, ...]
    bias: float
    depth: int
    features: np.ndarray  # (trees, 2**depth - 1) int: the feature each inner node splits on
    splits: np.ndarray  # (trees, 2**depth - 1)
    leaves: np.ndarray  # (trees, 2**depth): the value each leaf adds to the log-odds
    threshold: float = 0.5

    # The walk reads these flattened forms: tree t's node 0 is comparison t * inner (leaf 0: t * width).
    _flat_features: np.ndarray = field(init=False, repr=False)
    _flat_splits: np.ndarray = field(init=False, repr=False)
    _flat_leaves: np.ndarray = field(init=False, repr=False)
    _roots: np.ndarray = field(init=False, repr=False)
    _first_leaves: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        trees, inner = self.features.shape
        width = self.leaves.shape[1]
        object.__setattr__(self, "_flat_features", self.features.ravel())
        object.__setattr__(self, "_flat_splits", self.splits.ravel())
        object.__setattr__(self, "_flat_leaves", self.leaves.ravel())
        object.__setattr__(self, "_roots", np.arange(trees) * inner)
        object.__setattr__(self, "_first_leaves", np.arange(trees) * width - inner)

    def probability(self, x: Sequence[float]) -> float:
        return sigmoid(float(self._log_odds(np.asarray(x, dtype=float))))

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        return sigmoids(self._log_odds(np.asarray(x, dtype=float)))

    def _log_odds(self, x: np.ndarray) -> np.ndarray:
        """Of one row (x 1-D, the judge's hot path: ~11 us) or of each row (x 2-D): every split compared
        at once, then all trees walk down the comparisons together, one level a step."""
        right = x.take(self._flat_features, axis=-1) > self._flat_splits
        starts = self._roots if x.ndim == 1 else self._roots + np.arange(len(x))[:, None] * right.shape[-1]
        node = np.zeros(starts.shape, dtype=np.intp)
        for _ in range(self.depth):
            node = 2 * node + 1 + right.take(starts + node)  # (take reads `right` flattened)
        return self.bias + self._flat_leaves.take(self._first_leaves + node).sum(axis=-1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "boosted_trees",
            "names": list(self.names),
            "bias": self.bias,
            "depth": self.depth,
            "features": self.features.tolist(),
            "splits": self.splits.tolist(),
            "leaves": [[round(v, 9) for v in tree] for tree in self.leaves.tolist()],
            "threshold": round(self.threshold, 4),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BoostedTrees:
        return cls(
            names=tuple(data["names"]),
            bias=float(data["bias"]),
            depth=int(data["depth"]),
            features=np.array(data["features"], dtype=np.intp),
            splits=np.array(data["splits"], dtype=float),
            leaves=np.array(data["leaves"], dtype=float),
            threshold=float(data.get("threshold", 0.5)),
        )

    @classmethod
    def from_nodes(
        cls, names: Sequence[str], bias: float, trees: Sequence[Sequence[TreeNode]], depth: int
    ) -> BoostedTrees:
        """From trees given as node lists (node 0 the root), each as deep as `depth` at most."""
        inner, width = 2**depth - 1, 2**depth
        features = np.zeros((len(trees), inner), dtype=np.intp)
        splits = np.full((len(trees), inner), _ALWAYS_LEFT)
        leaves = np.zeros((len(trees), width))

        def place(tree: int, nodes: Sequence[TreeNode], node: int, slot: int) -> None:
            feature, split, left, right, value = nodes[node]
            if left < 0:  # a leaf: every full-depth slot under it holds its value
                first, last = slot, slot
                while first < inner:
                    first, last = 2 * first + 1, 2 * last + 2
                leaves[tree, first - inner : last - inner + 1] = value
            elif slot >= inner:
                raise ValueError(f"tree {tree} is deeper than {depth}")
            else:
                features[tree, slot], splits[tree, slot] = feature, split
                place(tree, nodes, left, 2 * slot + 1)
                place(tree, nodes, right, 2 * slot + 2)

        for t, nodes in enumerate(trees):
            place(t, nodes, 0, 0)
        return cls(tuple(names), float(bias), depth, features, splits, leaves)


def sigmoid(z: float) -> float:
    """The logistic function, its argument clipped to +-35 (where it is 0 or 1 to double precision)."""
    return 1.0 / (1.0 + math.exp(-max(-35.0, min(35.0, z))))


def sigmoids(z: np.ndarray) -> np.ndarray:
    """`sigmoid` of each element."""
    return 1.0 / (1.0 + np.exp(-np.clip(z, -35.0, 35.0)))
