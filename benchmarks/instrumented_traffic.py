"""The offline judge on what real instrumentation libraries emit, at scale.

    python -m benchmarks.instrumented_traffic [--questions 400] [--rounds 3] [COMBO ...]

Every other offline-judge figure is on records built from public text; these are the traces that the
real conformance apps (tests/instrumentation) export when they answer HaluEval QA questions
(`tests.instrumentation.traffic`: held-out rows, each row's knowledge a passage, right and
hallucinated answers alternating, each app's own top-2 retrieval over all the passages). Each
combination (default: all of `capture.COMBINATIONS`) is captured once into the cache, then measured
in a fresh process, since the combinations carry the same texts and no cache may carry over:
- extraction: the capture decoded, flattened, assembled and extracted as the collector does it
  (`testkit.captured`), records/s per core, best of `--rounds`, from its OTLP JSON and from the same
  requests as protobuf (what the stock exporters send by default; JSON decoding dominates the
  other); every question must give one record equal to what the app asked, retrieved and answered,
  and a loss is printed with the collector's own reason (`explain`);
- scoring: each record turned into the judge's case as the sampler does it (`to_test_case`), the
  five production metrics through the sidecar worker's code (`offline_speed.run_sidecar`), CPU time
  per record, best of `--rounds` rounds, each on a disjoint share of the records;
- accuracy (a sanity check): the pass rates of faithfulness and hallucination on right vs
  hallucinated answers, and the balanced accuracy of faithfulness 'failed' as a hallucination
  detector, overall and by whether retrieval put the question's own passage in the top 2 (compare
  `judge_accuracy`'s held-out HaluEval QA figure, judged on the row's own knowledge alone; there,
  answer length alone separates the labels well too, so this is a sanity check, not a benchmark).
These records are short (two passages of ~350 characters, answers of a few words to a sentence): the
scoring figure is lighter work than `offline_speed`'s real-text records. Printed figures only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
PASS_FAIL = ("passed", "failed")


def timed(run: Callable[[], T]) -> tuple[T, float]:
    cpu = time.process_time()
    result = run()
    return result, time.process_time() - cpu


def extraction(
    folder: Path, expected: list[dict[str, Any]], rounds: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(figures, the one record of each question that gave one), extracting as the collector does,
    from the capture's OTLP JSON and from the same requests as protobuf."""
    from collector.conventions import explain, extract
    from testkit.captured import assembled, payloads

    cpu: dict[str, float] = {}
    for encoding, bodies in (("json", payloads(folder)), ("protobuf", payloads(folder, protobuf=True))):

        def extract_all(bodies: tuple[bytes, bytes] = bodies) -> list[Any]:
            return [(trace, extract(trace.trace_id, trace.spans)) for trace in assembled(*bodies)]

        traces, cpu[encoding] = min((timed(extract_all) for _ in range(rounds)), key=lambda tc: tc[1])
    by_trace = {trace.trace_id: (trace, found) for trace, found in traces}
    lost: Counter[str] = Counter()
    records, differ = {}, 0
    for item in expected:
        trace, found = by_trace.get(item["trace_id"], (None, []))
        if len(found) != 1:
            lost[f"{len(found)} records" if found else explain(trace.spans)[-1] if trace else "no trace"] += 1
            continue
        record = records[item["trace_id"]] = found[0]
        seen = (record.query, record.response, [n.text for n in record.nodes])
        differ += seen != (item["question"], item["response"], [p["text"] for p in item["passages"]])
    asked = {item["trace_id"] for item in expected}
    figures = {
        "traces": len(traces),
        "questions": len(expected),
        "records": len(records),
        "lost": dict(lost),
        "differ": differ,
        "stray": sum(len(found) for trace, found in traces if trace.trace_id not in asked),
        "extract_s": {encoding: seconds / max(len(records), 1) for encoding, seconds in cpu.items()},
    }
    return figures, records


def scoring(records: dict[str, Any], rounds: int) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(figures, each record's metric results by name): the five metrics on the sidecar's cases."""
    from benchmarks.offline_speed import best_of, run_sidecar
    from benchmarks.synthetic_records import make_all, make_record
    from collector.judging.cases import to_test_case

    cases = [to_test_case(record) for record in records.values()]
    run_sidecar(make_all(make_record, 10**6, 3))  # warm-up on synthetic text: lazy loads, first calls
    scored: dict[str, dict[str, Any]] = {}

    def score(share: list[Any]) -> list[Any]:
        results = run_sidecar(share)
        scored.update((result.case_id, result.by_name()) for result in results)
        return results

    _, cpu, wall = best_of(rounds, lambda round_: cases[round_::rounds], score)
    neither = Counter(  # metric results neither passed nor failed, by metric and outcome
        f"{r.name} {r.outcome.value}"
        for by_name in scored.values()
        for r in by_name.values()
        if r.outcome.value not in PASS_FAIL
    )
    return {"score_s": cpu, "score_wall_s": wall, "neither": dict(neither)}, scored


def accuracy(
    chosen: Any, expected: list[dict[str, Any]], scored: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Pass rates on right vs hallucinated answers; faithfulness 'failed' as the hallucination
    detector, by whether the app retrieved the question's own passage (as it saw it)."""
    import numpy as np

    from scripts.offline_training import balanced_accuracy

    questions, passages = {q.text: q for q in chosen.questions}, {p.id: p.text for p in chosen.passages}
    own = {
        item["trace_id"]: passages[questions[item["question"]].passage_id]
        in [p["text"] for p in item["passages"]]
        for item in expected
    }
    rows = [  # (right answer, own passage retrieved, faithfulness outcome, hallucination outcome)
        (
            questions[item["question"]].grounded,
            own[item["trace_id"]],
            scored[item["trace_id"]]["faithfulness"].outcome.value,
            scored[item["trace_id"]]["hallucination"].outcome.value,
        )
        for item in expected
        if item["trace_id"] in scored
    ]

    def share(values: list[bool]) -> float | None:  # of all, unmeasured included
        return sum(values) / len(values) if values else None

    def detector(selected: list[tuple[bool, bool, str, str]]) -> tuple[float | None, int]:
        """Balanced accuracy of 'failed' = hallucinated (unmeasured counts as not flagged)."""
        labels = np.array([r[0] for r in selected], dtype=int)
        unflagged = np.array([r[2] != "failed" for r in selected], dtype=int)
        return (balanced_accuracy(unflagged, labels) if len(set(labels)) == 2 else None), len(selected)

    return {
        "own_passage": share(list(own.values())),
        "pass": {
            f"{metric} {kind}": share([r[column] == "passed" for r in rows if r[0] == right])
            for column, metric in ((2, "faithfulness"), (3, "hallucination"))
            for kind, right in (("right", True), ("hallucinated", False))
        },
        "accuracy": {
            "all": detector(rows),
            "own passage in top 2": detector([r for r in rows if r[1]]),
            "not": detector([r for r in rows if not r[1]]),
        },
    }


def measure(folder: Path, corpus_file: Path, rounds: int) -> dict[str, Any]:
    """One combination's figures (run in a fresh process: see the module's docstring)."""
    from tests.instrumentation.apps import corpus

    expected = json.loads((folder / "expected.json").read_text("utf-8"))
    extracted, records = extraction(folder, expected, rounds)
    scores, scored = scoring(records, rounds)
    return extracted | scores | accuracy(corpus.load(corpus_file), expected, scored)


def measured(folder: Path, name: str, rounds: int) -> dict[str, Any]:
    """`measure` in a fresh interpreter, the tokenizer single-threaded as in a sidecar worker."""
    command = [sys.executable, "-m", "benchmarks.instrumented_traffic", "--measure", str(folder / name)]
    command += ["--corpus", str(folder / "corpus.json"), "--rounds", str(rounds)]
    env = os.environ | {"TOKENIZERS_PARALLELISM": "false"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    if result.returncode != 0:
        raise SystemExit(f"measuring {name} failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.splitlines()[-1])


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def print_combination(name: str, m: dict[str, Any]) -> None:
    from benchmarks.offline_speed import report

    lost = ", ".join(f"{n} {reason}" for reason, n in m["lost"].items()) or "none"
    print(
        f"{name}: {m['traces']} traces, {m['records']} records of {m['questions']} questions (lost: {lost}); "
        f"{m['differ']} differ from what the app asked, retrieved and answered; "
        f"{m['stray']} from traces that asked nothing"
    )
    speeds = ", ".join(f"{1 / s:.0f}/s from OTLP {encoding}" for encoding, s in m["extract_s"].items())
    print(f"  extraction (decode, assemble, extract), records per core: {speeds}")
    report("  5 metrics, sidecar path", m["score_s"], m["score_wall_s"])
    rates = ", ".join(f"{key} {percent(value)}" for key, value in m["pass"].items())
    print(f"  own passage in the top 2: {percent(m['own_passage'])}; passed: {rates}")
    parts = [f"{key} {'n/a' if ba is None else f'{ba:.3f}'} ({n})" for key, (ba, n) in m["accuracy"].items()]
    print(f"  faithfulness 'failed' as hallucination detector, balanced accuracy: {'; '.join(parts)}")
    neither = ", ".join(f"{key} {n}" for key, n in sorted(m["neither"].items())) or "none"
    print(f"  metric results neither passed nor failed: {neither}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--questions", type=int, default=None, help="HaluEval QA questions asked (default 400)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds; the best counts")
    parser.add_argument("combinations", nargs="*", help="e.g. langchain-openllmetry (default: all)")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.corpus, args.rounds)))
        return 0
    from tests.instrumentation.capture import COMBINATIONS, combination_name
    from tests.instrumentation.traffic import DEFAULT_QUESTIONS, cached_capture, halueval_corpus

    names = [combination_name(*c) for c in COMBINATIONS]
    unknown = set(args.combinations) - set(names)
    if unknown:
        parser.error(f"unknown combination(s) {sorted(unknown)}; choose from {names}")
    chosen_combinations = [
        c for c in COMBINATIONS if not args.combinations or combination_name(*c) in args.combinations
    ]
    started = time.perf_counter()
    chosen = halueval_corpus(args.questions or DEFAULT_QUESTIONS)
    folder, seconds = cached_capture(chosen_combinations, chosen)
    took = time.perf_counter() - started
    grounded = sum(q.grounded for q in chosen.questions)
    print(
        f"corpus: {len(chosen.questions)} held-out HaluEval QA questions ({grounded} right answers, "
        f"{len(chosen.questions) - grounded} hallucinated), {len(chosen.passages)} passages, top 2 retrieved"
    )
    cold = ", ".join(f"{name} {s:.1f} s" for name, s in seconds.items())
    print(f"capture: {folder}: {took:.1f} s" + (f" (captured now: {cold})" if seconds else " (all cached)"))
    print(
        f"best of {args.rounds} rounds, per core (CPU time), tokenizer single-threaded, a fresh process each"
    )
    results = {}
    for combination in chosen_combinations:
        name = combination_name(*combination)
        results[name] = measured(folder, name, args.rounds)
        print_combination(name, results[name])
    header = ("records", "proto ex/s", "score ms", "score/s", "top-2", "BA")
    print(
        f"{'combination':26s} "
        + " ".join(f"{h:>{w}s}" for h, w in zip(header, (9, 10, 8, 7, 6, 6), strict=True))
    )
    for name, m in results.items():
        ba = m["accuracy"]["all"][0]
        print(
            f"{name:26s} {m['records']:4d}/{m['questions']:<4d} {1 / m['extract_s']['protobuf']:10.0f} "
            f"{1000 * m['score_s']:8.2f} {1 / m['score_s']:7.0f} {percent(m['own_passage']):>6s} "
            f"{'n/a' if ba is None else f'{ba:.3f}':>6s}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
