"""How good is the learned grounding model (`LearnedJudge`, opt-in)? Per labelled set: balanced
accuracy, AUROC and calibration, beside the word-overlap baseline and the answer-only score.
(`benchmarks.judge_accuracy` measures the default, lexical, offline judge.)

    python -m benchmarks.grounding_model --data DIR [--limit N]   # DIR: as scripts/grounding/sources.py says
    python -m benchmarks.grounding_model                          # the recorded and hand-written parts only

1. Left-out sources: what `python -m scripts.grounding.validate --record` measured, for each group
   of sets, on a model trained on every other group and never on it (benchmarks/data/grounding_loso.json).
   This is the figure to trust for text the model has never seen.
2. The shipped model on each training source's held-out slice (one document in twenty, never
   trained on), judged as a user runs it: the answer's claims, `Faithfulness()` passed or failed at its
   default threshold (the verdict), the weakest claim's P(supported) (the score, for AUROC and
   calibration), the same score with the context blanked (answer-only: a model that separates
   without the context learnt a shortcut), and word overlap (the share of the answer's content words
   found in the passages, its threshold fitted on one half and measured on the other).
3. The hand-written cases per category (tests/data/grounding_cases*.jsonl; the production set, support,
   HR, API, medicine and finance answers, was written before the learned model was first measured).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.judge_accuracy import CASE_FILES, hand_written
from evaluators import Faithfulness, TestCase, evaluate
from evaluators.offline import LearnedJudge
from scripts.grounding.metrics import auroc, balanced_accuracy, baseline_split_half, ece, overlap
from scripts.grounding.sources import Example, load
from testkit import ROOT

LOSO = ROOT / "benchmarks" / "data" / "grounding_loso.json"
_COLUMNS = "n bal.acc AUROC ECE | overlap bal.acc AUROC | answer-only AUROC"


def _row(name: str, row: dict[str, float]) -> str:
    return (
        f"  {name:22s} {int(row['n']):5d}  {row['bal_acc']:.3f}  {row['auroc']:.3f}  {row['ece']:.3f} |"
        f"  {row['overlap_bal_acc']:.3f}  {row['overlap_auroc']:.3f} |  {row['answer_only_auroc']:.3f}"
    )


def left_out() -> None:
    if not LOSO.is_file():
        print("no recorded left-out figures: run python -m scripts.grounding.validate --record")
        return
    recorded = json.loads(LOSO.read_text())
    print(f"1. Left-out sources ({recorded['note']})\n  {'set':22s} {_COLUMNS}")
    means: dict[str, list[float]] = defaultdict(list)
    for group, result in recorded["groups"].items():
        print(f"  [{group} left out; threshold {result['threshold']:.3f} from the training groups]")
        for name, row in result["sets"].items():
            print(_row(name, row))
            for key in ("bal_acc", "overlap_bal_acc", "auroc", "overlap_auroc"):
                means[key].append(row[key])
    print("  mean over sets: " + ", ".join(f"{k} {np.mean(v):.3f}" for k, v in means.items()))


def held_out_slice(data: Path, limit: int) -> None:
    judge = LearnedJudge()
    metric = Faithfulness()
    by_source: dict[str, list[Example]] = defaultdict(list)
    answers: list[tuple[float, int]] = []  # (faithfulness score, supported) of answers with 2+ claims
    for ex in load(data):
        if ex.fold(20) == 0:
            by_source[ex.source].append(ex)
    print(f"\n2. Shipped model, held-out slices (faithfulness threshold {metric.threshold})")
    print(f"  {'set':22s} {_COLUMNS}")
    for source, items in sorted(by_source.items()):
        items = random.Random(0).sample(items, min(limit, len(items)))
        y = np.array([e.supported for e in items])
        if len(set(y)) < 2:
            continue
        cases = [
            TestCase(input=e.question or None, actual_output=e.claim, retrieval_context=list(e.passages))
            for e in items
        ]
        results = evaluate(cases, [metric], judge).cases
        passed = np.array([r.results[0].outcome.value == "passed" for r in results])
        for r, e in zip(results, items, strict=True):
            if r.results[0].score is not None and r.results[0].details.get("claims", 0) > 1:
                answers.append((r.results[0].score, e.supported))
        score = np.array([_weakest(judge, e, blank=False) for e in items])
        blank = np.array([_weakest(judge, e, blank=True) for e in items])
        words = np.array([overlap(e) for e in items])
        row = {"n": len(items), "bal_acc": balanced_accuracy(y, passed), "auroc": auroc(y, score)}
        row |= {"ece": ece(y, score), "overlap_bal_acc": baseline_split_half(words, y)}
        row |= {"overlap_auroc": auroc(y, words), "answer_only_auroc": auroc(y, blank)}
        print(_row(source, row))
    pass_thresholds(answers)


def pass_thresholds(answers: list[tuple[float, int]]) -> None:
    """Faithfulness' pass threshold only matters for answers of two claims or more (one claim scores
    0 or 1): its false alarms (faithful answers failed) and misses (unfaithful answers passed)."""
    score, y = np.array([a[0] for a in answers]), np.array([a[1] for a in answers])
    if len(set(y)) < 2:
        return
    print(f"\n  faithfulness pass threshold on the {len(y)} answers of 2+ claims ({int(y.sum())} faithful):")
    for t in (0.5, 0.6, 2 / 3, 0.75, 0.8, 0.9, 1.0):
        passed = score >= t
        alarms, misses = 1 - passed[y == 1].mean(), passed[y == 0].mean()
        print(f"    {t:.2f}: false alarms {alarms:.3f}, misses {misses:.3f}, "
              f"balanced accuracy {balanced_accuracy(y, passed):.3f}")  # fmt: skip


def _weakest(judge: LearnedJudge, ex: Example, *, blank: bool) -> float:
    """The answer's weakest claim's P(supported), as the judge reads it (or against no context)."""
    claims = asyncio.run(judge.extract(ex.claim, "claims", question=ex.question)) or [ex.claim]  # type: ignore[arg-type]
    checks = judge.checks.check([(c, ex.question) for c in claims], ("",) if blank else ex.passages)
    return min(c.supported for c in checks)


def hand_cases() -> None:
    print("\n3. Hand-written cases")
    judge = LearnedJudge()
    for path in CASE_FILES:
        hand_written(path, judge)


def speed(n: int, rounds: int = 3) -> None:
    """The five default metrics through `evaluate()`, per core (CPU time), on the production-shaped
    records of `benchmarks.offline_speed`, the learned judge beside the lexical one; and the learned
    judge's cold start (import, model load, first record) in a fresh interpreter."""
    from benchmarks.offline_speed import FIVE
    from benchmarks.synthetic_records import make_all, make_record
    from evaluators import create_metric
    from evaluators.offline import OfflineJudge

    print(f"\n4. Speed: the five default metrics through evaluate(), best of {rounds} rounds of {n} records")
    five = [create_metric(name) for name in FIVE]
    for offset, judge in ((0, LearnedJudge()), (10**6, OfflineJudge())):
        evaluate(make_all(make_record, 10**7 + offset, 3), five, judge)  # warm-up: lazy loads
        cpu = _per_core(rounds, n, offset, five, judge)
        print(
            f"  {type(judge).__name__:13s} {1 / cpu:6.1f} records/s per core ({1000 * cpu:.1f} ms CPU each)"
        )
    code = (
        "import time; t = time.perf_counter(); from evaluators import create_metric, evaluate; "
        "from evaluators.offline import LearnedJudge; "
        "from benchmarks.synthetic_records import make_all, make_record; "
        f"evaluate(make_all(make_record, 5, 1), [create_metric(m) for m in {FIVE!r}], LearnedJudge()); "
        "print(time.perf_counter() - t)"
    )
    cold = min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    cwd=ROOT).stdout.split()[-1]) for _ in range(3))  # fmt: skip
    print(f"  LearnedJudge cold start (import + load + first record, 5 metrics): {cold:.2f} s")


def _per_core(rounds: int, n: int, offset: int, metrics: list[Any], judge: Any) -> float:
    from benchmarks.offline_speed import best_of
    from benchmarks.synthetic_records import make_all, make_record

    def records(round_: int) -> list[Any]:
        return make_all(make_record, offset + round_ * n, n)

    return best_of(rounds, records, lambda rs: evaluate(rs, metrics, judge))[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, help="the labelled sets (scripts/grounding/sources.py)")
    parser.add_argument("--limit", type=int, default=400, help="examples per held-out slice")
    parser.add_argument("--speed", type=int, metavar="N", help="also time N records per round")
    args = parser.parse_args()
    left_out()
    if args.data:
        held_out_slice(args.data, args.limit)
    hand_cases()
    if args.speed:
        speed(args.speed)


if __name__ == "__main__":
    main()
