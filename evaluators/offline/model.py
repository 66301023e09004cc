"""A few-weight logistic regression in numpy: the calibrated core of the offline judge.

Logistic regression fitted by log-loss gives probabilities that are calibrated on data like its
training data, which the cascade needs (claims in the uncertainty band go to the LLM judge). Its
weights are a handful of numbers committed as JSON, so the model is reviewable in a diff.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

MODEL_PATH = Path(__file__).with_name("data") / "model.json"


@dataclass(frozen=True, slots=True)
class LogisticModel:
    """P(y=1 | x) = sigmoid(bias + sum_i weight_i * (x_i - mean_i) / scale_i)."""

    names: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    means: tuple[float, ...]
    scales: tuple[float, ...]
    threshold: float = 0.5

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(
            w * (v - m) / s for w, v, m, s in zip(self.weights, x, self.means, self.scales, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-35.0, min(35.0, z))))

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = self.bias + ((x - np.asarray(self.means)) / np.asarray(self.scales)) @ np.asarray(self.weights)
        return 1.0 / (1.0 + np.exp(-np.clip(z, -35.0, 35.0)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "means": [round(m, 6) for m in self.means],
            "scales": [round(s, 6) for s in self.scales],
            "threshold": round(self.threshold, 4),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LogisticModel:
        return cls(
            names=tuple(data["names"]),
            weights=tuple(float(w) for w in data["weights"]),
            bias=float(data["bias"]),
            means=tuple(float(m) for m in data["means"]),
            scales=tuple(float(s) for s in data["scales"]),
            threshold=float(data.get("threshold", 0.5)),
        )


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray,
    names: Sequence[str],
    *,
    l2: float = 1.0,
    iterations: int = 50,
    sample_weight: np.ndarray | None = None,
) -> LogisticModel:
    """Newton-Raphson (IRLS) on standardised features with an L2 penalty; deterministic.
    `sample_weight` lets a small real dataset count as much as a large synthetic one."""
    w = np.ones(len(x)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    means = x.mean(axis=0)
    scales = x.std(axis=0)
    scales[scales < 1e-9] = 1.0
    xs = np.hstack([np.ones((len(x), 1)), (x - means) / scales])
    beta = np.zeros(xs.shape[1])
    penalty = np.eye(xs.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(xs @ beta, -35, 35)))
        gradient = xs.T @ (w * (p - y)) + penalty @ beta
        hessian = (xs * (w * p * (1 - p))[:, None]).T @ xs + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return LogisticModel(
        names=tuple(names),
        weights=tuple(float(b) for b in beta[1:]),
        bias=float(beta[0]),
        means=tuple(float(m) for m in means),
        scales=tuple(float(s) for s in scales),
    )


def save_models(models: dict[str, LogisticModel], meta: dict[str, Any], path: Path = MODEL_PATH) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"meta": meta, **{name: m.to_dict() for name, m in models.items()}}
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


@cache
def load_models(path: Path = MODEL_PATH) -> dict[str, LogisticModel]:
    """The packaged models by name ('grounding', 'relevant', 'useful'), loaded once per process."""
    payload = json.loads(path.read_text(encoding="utf-8"))
    return {name: LogisticModel.from_dict(d) for name, d in payload.items() if name != "meta"}
