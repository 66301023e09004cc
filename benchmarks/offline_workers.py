"""Does `evaluation.workers` mean parallelism for the offline judge? Records/s against workers.

    python -m benchmarks.offline_workers [--flood 400] [--workers 1 2 4]

`ragpulse run` in a subprocess with the offline judge, a flood of distinct traces over OTLP/HTTP,
five metrics per record; for each `evaluation.workers` value, records evaluated per second and the
peak memory (PSS) of the whole process tree (the sidecar plus its judge worker processes). The reference
row runs the judge on the event loop (`judge.offline_processes: 0`), as every release before the
worker pool did: there, `workers` could not add parallelism.
"""

from __future__ import annotations

import argparse
import os
import time

from benchmarks.pipeline import unique_trace
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess, tree_memory_mib
from testkit.scrape import scrape


def run(workers: int, count: int, processes: int | None) -> tuple[float, float]:
    """Records evaluated per second over a flood of `count`, and the peak tree memory in MiB."""
    env = {
        "RAGPULSE_EVALUATION__WORKERS": str(workers),
        "RAGPULSE_EVALUATION__QUEUE_SIZE": str(count * 2),
    }
    if processes is not None:
        env["RAGPULSE_JUDGE__OFFLINE_PROCESSES"] = str(processes)
    bodies = [unique_trace(i) for i in range(count)]
    with RagpulseProcess("--quiet-period", "0.1", "--quiet", env=env) as ragpulse:
        assert ragpulse.process is not None
        peak = tree_memory_mib(ragpulse.process.pid)
        start = time.monotonic()
        for body in bodies:
            assert post_traces(ragpulse.otlp_port, body)[0] == 200
        done, sampled = 0.0, start
        while done < count and time.monotonic() - start < 600:
            metrics = scrape(ragpulse.metrics_port)
            done = metrics.value("ragpulse_evaluations_total", metric="faithfulness") + metrics.value(
                "ragpulse_dropped_total"
            )
            if time.monotonic() - sampled >= 1.0:  # reading smaps costs CPU the sidecar competes for
                peak, sampled = max(peak, tree_memory_mib(ragpulse.process.pid)), time.monotonic()
            time.sleep(0.05)
        peak = max(peak, tree_memory_mib(ragpulse.process.pid))
        elapsed = time.monotonic() - start
    return count / elapsed, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood", type=int, default=400, help="records per run")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPU cores; {args.flood} records per run, 5 metrics each, offline judge")
    reference, rss = run(8, args.flood, processes=0)
    print(
        f"  judge on the event loop (offline_processes 0), workers 8: {reference:6.1f} records/s, "
        f"peak memory (PSS) {rss:.0f} MiB"
    )
    first: float | None = None
    for workers in args.workers:
        rate, rss = run(workers, args.flood, processes=None)
        first = first or rate
        print(
            f"  worker pool, evaluation.workers {workers}: {rate:6.1f} records/s "
            f"({rate / first:.2f}x workers 1, {rate / reference:.2f}x on the loop), "
            f"peak memory (PSS) {rss:.0f} MiB"
        )


if __name__ == "__main__":
    main()
