"""What reviewers' corrections buy: the pass threshold refitted on labelled answers, measured held out.

    python -m benchmarks.review_fit [--judge offline|offline-learned]

Each hand-written grounding case (tests/data/grounding_cases*.jsonl; the production-style set is the
one written before the judge met it) stands for one reviewer's correction of `faithfulness`: the
answer should pass when the case expects "supported". Per set and for all of them, the agreement of
the judge's pass/fail with those labels at the metric's shipped threshold, and with the threshold
`collector/review/fit.py` refits on them, each case judged by a fit made without it (leave one out):
exactly what the page reports as `ragpulse_judge_human_agreement_ratio{thresholds=...}`. Beside it,
the AUROC of the score, the ceiling of what any threshold can do.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from collector.review.fit import Labelled, fit
from evaluators import Faithfulness, TestCase, evaluate
from evaluators.judge_choice import choose_judge, make_judge
from evaluators.offline.grounding_cases import load_cases
from scripts.offline_training import auroc

ROOT = Path(__file__).resolve().parents[1]
SETS = ("grounding_cases", "grounding_cases_more", "grounding_cases_production")


def labelled(path: Path, judge_name: str) -> list[Labelled]:
    cases = [c for c in load_cases(path) if c["expect"] in ("supported", "unsupported", "contradicted")]
    tests = [
        TestCase(input=c["question"], actual_output=c["answer"], retrieval_context=c["contexts"])
        for c in cases
    ]
    metric = Faithfulness()
    result = evaluate(tests, [metric], make_judge(choose_judge(judge_name)))  # type: ignore[arg-type]
    items = []
    for case, scored in zip(cases, result.cases, strict=True):
        (faith,) = scored.results
        if faith.score is not None:
            items.append(Labelled(faith.score, case["expect"] == "supported", faith.threshold))
    return items


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--judge", default="offline")
    args = parser.parse_args()
    print(f"faithfulness, judge {args.judge}: agreement with the labels (reviewers' corrections)")
    print(
        f"  {'set':28s} {'n':>4s} {'shipped':>8s} {'fitted (held out)':>18s} {'threshold':>10s} {'AUROC':>6s}"
    )
    everything: list[Labelled] = []
    for name in SETS:
        items = labelled(ROOT / "tests" / "data" / f"{name}.jsonl", args.judge)
        everything += items
        report(name, items)
    report("all", everything)


def report(name: str, items: list[Labelled]) -> None:
    found = fit("bench", "faithfulness", "offline", items, min_corrections=5)
    area = auroc([i.score for i in items], [int(i.human_passed) for i in items])  # type: ignore[arg-type]
    used = f"{found.fitted:.2f}" if found.applied else f"{found.shipped:.2f} kept"
    print(
        f"  {name:28s} {found.corrections:4d} {found.agreement_shipped:8.3f} {found.agreement_fitted:18.3f} "
        f"{used:>10s} {area:6.3f}"
    )


if __name__ == "__main__":
    main()
