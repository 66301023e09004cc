"""Offline judge throughput: faithfulness + answer relevancy cases per second on one core.

    python -m benchmarks.offline_speed [--cases 400]

Each case: a question, a 3-sentence answer, 5 retrieved nodes of ~500 characters, all distinct
across cases (so no cache makes it look faster than production). Measures, in one process:
- cold start: constructing the judge and its first verdicts (wordllama and the models load lazily);
- the judge alone: what Faithfulness (claims + supported verdicts) and the similarity variant of
  answer relevancy (questions + embeddings + cosine) ask of it;
- the same through the public API, `evaluate([...], [Faithfulness(), AnswerRelevancySimilarity()])`.
The goal is >= 200 cases/s per core.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

import numpy as np

from evaluators.judges.base import ExtractKind, VerdictTask

GOAL = 200.0
TOPICS = ["Kubernetes", "PostgreSQL", "Kafka", "the Eiffel Tower", "Apollo 11", "ibuprofen", "mortgages"]
VERBS = ["was released", "is configured", "was measured", "is replicated", "was approved", "is scheduled"]


def sentence(rng: random.Random, i: int) -> str:
    topic, verb = rng.choice(TOPICS), rng.choice(VERBS)
    return (
        f"In {1900 + rng.randrange(125)}, {topic} {verb} with {rng.randrange(2, 900)} units "
        f"across {rng.randrange(2, 40)} regions, according to report {i}-{rng.randrange(10**6)}."
    )


def make_case(rng: random.Random, i: int) -> dict[str, object]:
    nodes = []
    for _ in range(5):
        node = ""
        while len(node) < 480:
            node += sentence(rng, i) + " "
        nodes.append(node.strip())
    grounded = rng.choice(nodes[0].split(". ")).rstrip(".") + "."
    return {
        "input": f"What happened with {rng.choice(TOPICS)} in case {i}?",
        "actual_output": " ".join([grounded, sentence(rng, i), sentence(rng, i)]),
        "retrieval_context": nodes,
    }


async def judge_only(judge, cases) -> None:
    for case in cases:
        claims = await judge.extract(case["actual_output"], ExtractKind.CLAIMS, question=case["input"])
        await judge.verdicts(claims, case["retrieval_context"], VerdictTask.SUPPORTED)
        questions = await judge.questions(case["actual_output"])
        vectors = np.asarray(await judge.embed([case["input"], *questions.questions]))
        float(np.mean(vectors[1:] @ vectors[0]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=400)
    args = parser.parse_args()
    rng = random.Random(1)
    warmup = [make_case(rng, -i) for i in range(1, 4)]
    cases = [make_case(rng, i) for i in range(args.cases)]
    api_cases = [make_case(rng, args.cases + i) for i in range(args.cases)]

    started = time.perf_counter()
    from evaluators.offline import OfflineJudge

    judge = OfflineJudge()
    asyncio.run(judge_only(judge, warmup[:1]))
    cold = time.perf_counter() - started
    asyncio.run(judge_only(judge, warmup[1:]))

    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(judge_only(judge, cases))
    judge_cpu, judge_wall = time.process_time() - cpu, time.perf_counter() - wall

    from evaluators import AnswerRelevancySimilarity, Faithfulness, evaluate

    metrics = [Faithfulness(), AnswerRelevancySimilarity()]
    evaluate(warmup, metrics, judge)
    cpu, wall = time.process_time(), time.perf_counter()
    result = evaluate(api_cases, metrics, judge, concurrency=8)
    api_cpu, api_wall = time.process_time() - cpu, time.perf_counter() - wall
    errors = sum(1 for c in result.cases for r in c.results if r.score is None)

    print(f"cold start (import + load + first case): {cold * 1000:.0f} ms")
    for label, n, cpu_s, wall_s in (
        ("judge operations", len(cases), judge_cpu, judge_wall),
        ("evaluate() public API", len(api_cases), api_cpu, api_wall),
    ):
        per_core = n / cpu_s
        print(
            f"{label:24s} {n / wall_s:7.0f} cases/s wall, {per_core:7.0f} cases/s per core (CPU time), "
            f"{1000 * cpu_s / n:.2f} ms/case; goal {GOAL:.0f}/s per core: x{per_core / GOAL:.1f}"
        )
    print(f"metric results without a score: {errors}")


if __name__ == "__main__":
    main()
