"""The sidecar under load, as deployed: `ragpulse run` in a subprocess, traffic over OTLP/HTTP.

Prints (1) end-to-end latency, span end -> score visible on /metrics, p50/p99, at a steady rate
with the offline judge; (2) evaluations per second with the offline judge, and with an
OpenAI-compatible judge of fixed 200 ms latency at 1, 8 and 32 concurrent records; (3) the
memory of the sidecar and its judge worker processes after each run (PSS).

    python -m benchmarks.pipeline [--rate 20] [--seconds 20] [--flood 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

from testkit.openai_server import ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess, tree_memory_mib
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.scrape import Scrape, scrape

QUIET_PERIOD_S = 0.5


def unique_trace(i: int) -> bytes:
    """Distinct content per trace, so the judge's response cache cannot answer for the judge."""
    case = RagCase()
    case.query = f"{case.query} (request {i})"
    case.response = f"{case.response} This answers request {i}."
    return encode(make_spans("ragpulse", case))


def evaluated(port: int) -> float:
    return scrape(port).value("ragpulse_evaluations_total", metric="faithfulness")


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def latency_run(rate: float, seconds: float) -> None:
    with RagpulseProcess("--quiet-period", str(QUIET_PERIOD_S)) as ragpulse:
        bodies = [unique_trace(i) for i in range(int(rate * seconds))]
        sent: list[float] = []
        done: list[float] = []
        start = time.monotonic()
        for i, body in enumerate(bodies):  # steady rate; the span ended just before it is sent
            time.sleep(max(0.0, start + i / rate - time.monotonic()))
            sent.append(time.monotonic())
            assert post_traces(ragpulse.otlp_port, body)[0] == 200
            while len(done) < evaluated(ragpulse.metrics_port):
                done.append(time.monotonic())
        while len(done) < len(bodies) and time.monotonic() - sent[-1] < 60:
            count = evaluated(ragpulse.metrics_port)
            now = time.monotonic()
            done.extend([now] * int(count - len(done)))
            time.sleep(0.01)
        latencies = [d - s for s, d in zip(sent, done, strict=False)]  # evaluations complete in arrival order
        rss = tree_memory_mib(ragpulse.process.pid)
    print(
        f"[offline judge] {len(bodies)} traces at {rate:g}/s: "
        f"end-to-end p50 {percentile(latencies, 50):.3f} s, "
        f"p99 {percentile(latencies, 99):.3f} s (includes the {QUIET_PERIOD_S} s quiet period); "
        f"5 metrics per trace; memory {rss:.0f} MiB (PSS, with the judge workers)"
    )


def flood(ragpulse: RagpulseProcess, count: int) -> tuple[float, Scrape]:
    """Post `count` distinct traces at once; seconds until all are evaluated (or shed), and /metrics."""
    bodies = [unique_trace(i) for i in range(count)]
    start = time.monotonic()
    for body in bodies:
        assert post_traces(ragpulse.otlp_port, body)[0] == 200
    while time.monotonic() - start < 600:
        progress = scrape(ragpulse.metrics_port)
        finished = progress.value("ragpulse_evaluations_total", metric="faithfulness") + progress.value(
            "ragpulse_dropped_total"
        )
        if finished >= count:
            break
        time.sleep(0.05)
    return time.monotonic() - start, scrape(ragpulse.metrics_port)


def report(
    label: str, count: int, elapsed: float, metrics: Scrape, rss: float, requests: int | None = None
) -> None:
    evaluations = metrics.value("ragpulse_evaluations_total")
    failed = metrics.value("ragpulse_evaluations_total", outcome="error") + metrics.value(
        "ragpulse_dropped_total"
    )
    judge = (
        ""
        if requests is None
        else f"{requests / elapsed:.1f} judge requests/s ({requests / count:.1f} per record), "
    )
    print(
        f"[{label}] {count} records in {elapsed:.1f} s: {count / elapsed:.1f} records/s, "
        f"{evaluations / elapsed:.1f} metric evaluations/s, {judge}errors or drops {failed:.0f}; "
        f"memory {rss:.0f} MiB (PSS, with the judge workers)"
    )


def offline_throughput_run(count: int) -> None:
    with RagpulseProcess(
        "--quiet-period", "0.1", env={"RAGPULSE_EVALUATION__QUEUE_SIZE": str(count * 2)}
    ) as ragpulse:
        elapsed, metrics = flood(ragpulse, count)
        rss = tree_memory_mib(ragpulse.process.pid)
    report("offline judge, 5 metrics", count, elapsed, metrics, rss)


def throughput_run(concurrency: int, count: int) -> None:
    with (
        ScriptedOpenAIServer(latency_s=0.2) as judge,
        RagpulseProcess(
            "--quiet-period",
            "0.1",
            "--judge-base-url",
            judge.base_url,
            "--judge-model",
            "bench-judge",
            env={
                "RAGPULSE_EVALUATION__WORKERS": str(concurrency),
                "RAGPULSE_EVALUATION__QUEUE_SIZE": str(count * 2),
                "OPENAI_API_KEY": "bench-key-not-secret",
            },
        ) as ragpulse,
    ):
        elapsed, metrics = flood(ragpulse, count)
        rss = tree_memory_mib(ragpulse.process.pid)
        requests = len(judge.requests)  # HTTP requests the judge server actually answered
    report(f"200 ms judge, concurrency {concurrency:>2}", count, elapsed, metrics, rss, requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=20.0, help="traces per second for the latency run")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--flood", type=int, default=200, help="records per throughput run")
    args = parser.parse_args()
    latency_run(args.rate, args.seconds)
    offline_throughput_run(args.flood * 2)
    for concurrency in (1, 8, 32):  # concurrency 1 is ~0.5 s per record: a smaller run says as much
        throughput_run(concurrency, args.flood if concurrency > 1 else max(20, args.flood // 8))


if __name__ == "__main__":
    main()
