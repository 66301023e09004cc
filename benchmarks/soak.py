"""Soak: the whole stack for a long time with faults on a schedule; does anything leak, stall or get lost?

    python -m benchmarks.soak [--minutes 30] [--rate 20] [--judge offline|slow-llm] [--judge-latency-s 0.5]
                              [--faults cycle|broker-restart|none] [--fault-every 120] [--repeat-trace]
                              [--store-mb MB]

A broker of its own (scripts/kafka.sh), two `ragpulse run` replicas in one group, the results topic and
an OTLP sink as exporters, and a producer sending `--rate` RAG traces a second, each answer different
(`--repeat-trace`: all the same case, so the judge's reply cache answers nearly every call). The judge
is the offline one (`--judge offline`, the default) or a scripted OpenAI-compatible server answering
every request after `--judge-latency-s` (`--judge slow-llm`). Faults (`--faults`):

    cycle (default): every `--fault-every` s the next of replica SIGKILL (restarted 5 s later) ·
        broker SIGKILL (restarted 15 s later) · tracing backend 503 for 30 s · a third replica joins ·
        tracing backend hung for 30 s · broker frozen for 20 s · the third replica leaves (SIGTERM)
    broker-restart: one broker SIGKILL, restarted 15 s later, at the middle of the run; nothing else
    none: no fault (a memory soak: no process restarted, so each row of the memory table spans the run)

Every 30 s it prints throughput, lag (produced minus committed), the RSS of every process of each
replica (the sidecar, then its children: offline judge workers, fork server) and the faults so far;
lag is also sampled every 5 s. The page is on, its store in memory (the sidecar's default), capped at
`--store-mb` (unset: the sidecar's default, `page.max_store_mb`). At the end, once the backlog drained: a
memory table per process and per replica's whole tree (RSS and PSS at the first sample after warm-up, at
the middle, at the end; the peak RSS; and whether it is flat: its PSS grew by at most `FLAT_MIB` MiB or
`FLAT_SHARE` over the second half, that is, from the middle to the end of the run),
the ledger of trace ids produced against trace ids scored in both exporters (lost, duplicated), how
long the backlog took to drain, and how long after the broker restart the lag took to come back to
its steady level for good: the 5 s lag sample after the last one above twice the median lag before the
fault (or one second of traffic, whichever is more), printed with the samples from the SIGKILL on.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil

from testkit.kafka_broker import FaultyBroker
from testkit.kafka_read import read_topic
from testkit.openai_server import ScriptedOpenAIServer
from testkit.otlp_sink import OtlpSink, SinkMode
from testkit.process import RagpulseProcess
from testkit.rag_traces import RagCase
from testkit.reliability import Stack

REPORT_EVERY_S, LAG_EVERY_S, WARM_UP_S = 30.0, 5.0, 60.0
FLAT_MIB, FLAT_SHARE = 4.0, 0.05  # flat: PSS grew by at most this over the second half (or this share)
Fault = tuple[str, Callable[[], None]]


def process_memory(pid: int) -> dict[str, tuple[float, float]]:
    """(RSS, PSS) in MiB of a sidecar and of each of its descendants, by role: "sidecar", then
    multiprocessing's "resource tracker", "fork server" for a child with children of its own, and
    "worker N" for the others (the offline judge's processes, by pid order)."""
    try:
        root = psutil.Process(pid)
        descendants = sorted(root.children(recursive=True), key=lambda p: p.pid)
    except psutil.Error:
        return {}
    roles, workers = {}, 0
    for process in [root, *descendants]:
        try:
            if process is root:
                role = "sidecar"
            elif "resource_tracker" in " ".join(process.cmdline()):
                role = "resource tracker"
            elif process.children():
                role = "fork server"
            else:
                workers += 1
                role = f"worker {workers}"
            info = process.memory_full_info()
            roles[role] = (info.rss / 2**20, info.pss / 2**20)
        except psutil.Error:
            continue  # exited between the listing and the reading
    return roles


class Soak:
    def __init__(self, stack: Stack, broker: FaultyBroker, sink: OtlpSink) -> None:
        self.stack, self.broker, self.sink = stack, broker, sink
        self.faults: list[str] = []  # injected, with the minute they started
        self.producer_errors = 0
        self.producer_stall_s = 0.0  # the longest one second's traces took to be acknowledged
        self.labels: dict[int, str] = {}  # replica pid -> "r1 (initial)", ...
        self.memory: dict[str, list[tuple[float, float, float]]] = {}  # role -> (elapsed s, RSS, PSS)
        self.lags: list[tuple[float, int]] = []  # (elapsed s, lag), broker up
        self.broker_fault: tuple[float, float] | None = None  # elapsed s at the SIGKILL, at the restart
        self._joined: RagpulseProcess | None = None
        self._stop = threading.Event()

    def produce(self, rate: float, repeat: bool) -> None:
        """`rate` traces a second until stopped; a broker outage only delays them (the producer retries).
        Each answer names its trace's number (no two judge requests alike, as in production) unless
        `repeat`: then every trace is the same case, and the judge's reply cache answers most calls."""
        sent = itertools.count()
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                if repeat:
                    self.stack.produce(max(1, int(rate)))
                for n in itertools.islice(sent, 0 if repeat else max(1, int(rate))):
                    answer = f"The Eiffel Tower was completed in 1889. Visitor {n} asked about it."
                    self.stack.produce(1, RagCase(response=answer))
            except Exception:  # the broker is down: try again next second
                self.producer_errors += 1
            self.producer_stall_s = max(self.producer_stall_s, time.monotonic() - started)
            self._stop.wait(max(0.0, 1.0 - (time.monotonic() - started)))

    def cycle(self) -> Iterator[Fault]:
        return itertools.cycle(
            [
                ("replica SIGKILL", self.kill_replica),
                ("broker SIGKILL", self.kill_broker),
                ("backend 503 30 s", lambda: self.backend(SinkMode.UNAVAILABLE, 30)),
                ("replica joins", self.join),
                ("backend hung 30 s", lambda: self.backend(SinkMode.BLACKHOLE, 30)),
                ("broker frozen 20 s", self.freeze_broker),
                ("replica leaves", self.leave),
            ]
        )

    def start_replica(self, why: str) -> RagpulseProcess:
        replica = self.stack.start_replica()
        if replica.process is not None:
            self.labels[replica.process.pid] = f"r{len(self.labels) + 1} ({why})"
        return replica

    def kill_replica(self) -> None:
        victim = self.stack.replicas[0]
        victim.kill()
        self.stack.replicas.remove(victim)
        time.sleep(5)
        self.start_replica("restarted after SIGKILL")

    def kill_broker(self) -> None:
        self.broker.kill()
        time.sleep(15)
        self.broker.restart()

    def backend(self, mode: SinkMode, seconds: float) -> None:
        self.sink.set_mode(mode)
        time.sleep(seconds)
        self.sink.set_mode(SinkMode.OK)

    def freeze_broker(self) -> None:
        self.broker.freeze()
        time.sleep(20)
        self.broker.resume()

    def join(self) -> None:
        self._joined = self.start_replica("joined")

    def leave(self) -> None:
        if self._joined is not None and self._joined in self.stack.replicas:
            self._joined.stop()
            self.stack.replicas.remove(self._joined)
            self._joined = None

    def inject(self, name: str, fault: Callable[[], None], started: float) -> None:
        at = time.monotonic() - started
        print(f"  fault at {at / 60:.1f} min: {name}", flush=True)
        fault()
        back = time.monotonic() - started
        self.faults.append(f"{name} at {at / 60:.1f} min (back after {back - at:.0f} s)")
        if "broker SIGKILL" in name and self.broker_fault is None:
            self.broker_fault = (at, back)

    def sample_lag(self, elapsed: float) -> int:
        try:
            lag = len(self.stack.produced) - self.stack.committed()
        except Exception:
            return -1  # the broker is down
        self.lags.append((elapsed, lag))
        return lag

    def report(self, elapsed: float) -> None:
        produced = len(self.stack.produced)
        lag = self.sample_lag(elapsed)
        replicas = []
        for replica in self.stack.replicas:
            if replica.process is None or replica.process.poll() is not None:
                continue
            label = self.labels.get(replica.process.pid, "?").split()[0]
            roles = process_memory(replica.process.pid)
            tree = (sum(rss for rss, _ in roles.values()), sum(pss for _, pss in roles.values()))
            for role, (rss, pss) in [*roles.items(), ("tree", tree)]:
                self.memory.setdefault(f"{label} {role}", []).append((elapsed, rss, pss))
            replicas.append(f"{label} " + "/".join(f"{rss:.0f}" for rss, _ in roles.values()))
        print(
            f"{elapsed / 60:5.1f} min  produced {produced:6d} ({produced / elapsed:5.1f}/s)  lag {lag:6d}  "
            f"RSS MiB sidecar/children [{'; '.join(replicas)}]  faults {len(self.faults)}",
            flush=True,
        )

    def memory_table(self, middle_s: float) -> list[str]:
        """RSS and PSS (MiB) of each process and each replica's tree (RSS summed counts shared pages once
        per process; PSS does not) at start (the first sample after warm-up), middle and end, the peak
        RSS, and the PSS growth over the second half, which says whether it is flat."""
        rows = [
            f"{'process':<24} {'RSS start':>9} {'middle':>6} {'end':>5} {'max':>5}   "
            f"{'PSS start':>9} {'middle':>6} {'end':>5}   2nd half  flat"
        ]
        for role, samples in self.memory.items():
            warm = [s for s in samples if s[0] >= WARM_UP_S] or samples
            start, end = warm[0], warm[-1]
            middle = min(warm, key=lambda s: abs(s[0] - middle_s))
            peak = max(warm, key=lambda s: s[1])
            grew = end[2] - middle[2]
            flat = "yes" if grew <= max(FLAT_MIB, FLAT_SHARE * middle[2]) else "NO"
            rows.append(
                f"{role:<24} {start[1]:9.0f} {middle[1]:6.0f} {end[1]:5.0f} {peak[1]:5.0f}   "
                f"{start[2]:9.0f} {middle[2]:6.0f} {end[2]:5.0f}   {grew:+6.1f}  {flat}"
            )
        return rows

    def recovery_s(self, rate: float) -> str:
        """Seconds from the broker's restart until the lag was back to its steady level."""
        if self.broker_fault is None:
            return "no broker restart"
        killed, back = self.broker_fault
        before = [lag for at, lag in self.lags if WARM_UP_S <= at < killed]
        if not before:
            return "no lag sampled before the fault"
        median = statistics.median(before)
        steady = max(2 * median, rate)
        after = [(at, lag) for at, lag in self.lags if at >= back]
        if not after:
            return "no lag sampled after the restart"
        above = [i for i, (_, lag) in enumerate(after) if lag > steady]
        series = " ".join(str(lag) for at, lag in self.lags if at >= killed and at < back + 300)
        figures = f"steady: lag <= {steady:.0f}, median before the fault {median:.0f}; every 5 s: {series}"
        if above and above[-1] == len(after) - 1:
            return f"never ({figures})"
        settled = after[above[-1] + 1][0] if above else after[0][0]  # for good: no later sample above it
        return f"{settled - back:.0f} s ({figures})"


def judge_env(judge: ScriptedOpenAIServer) -> dict[str, str]:
    return {
        "RAGPULSE_JUDGE__BASE_URL": judge.base_url,
        "RAGPULSE_JUDGE__MODEL": "scripted-judge",
        "RAGPULSE_JUDGE__TIMEOUT_S": str(max(10.0, 10 * judge.latency_s)),
        "OPENAI_API_KEY": "test-key-not-secret",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=20.0, help="traces a second")
    parser.add_argument("--judge", choices=("offline", "slow-llm"), default="offline")
    parser.add_argument("--judge-latency-s", type=float, default=0.5, help="each slow-llm judge request")
    parser.add_argument("--faults", choices=("cycle", "broker-restart", "none"), default="cycle")
    parser.add_argument("--fault-every", type=float, default=120.0, help="seconds between faults (cycle)")
    parser.add_argument("--repeat-trace", action="store_true", help="every trace the same RAG case")
    parser.add_argument("--drain-minutes", type=float, default=10.0, help="longest wait for the backlog")
    parser.add_argument("--store-mb", type=float, help="the page's store cap (page.max_store_mb)")
    args = parser.parse_args()
    run_s = args.minutes * 60

    with contextlib.ExitStack() as resources:
        state = resources.enter_context(tempfile.TemporaryDirectory(prefix="ragpulse-soak-"))
        sink = resources.enter_context(OtlpSink())
        judge = None
        if args.judge == "slow-llm":
            judge = resources.enter_context(ScriptedOpenAIServer(latency_s=args.judge_latency_s))
        broker = FaultyBroker(Path(state) / "kafka", watch_pid=os.getpid())
        resources.callback(broker.stop)
        stack = Stack(
            broker.bootstrap,
            sink,
            metrics=("faithfulness", "answer_relevancy"),
            partitions=6,
            extra_env={
                **(judge_env(judge) if judge else {}),
                **({"RAGPULSE_PAGE__MAX_STORE_MB": f"{args.store_mb:g}"} if args.store_mb else {}),
            },
        )
        resources.callback(stack.close)
        soak = Soak(stack, broker, sink)
        soak.start_replica("initial")
        soak.start_replica("initial")
        started = time.monotonic()
        producer = threading.Thread(target=soak.produce, args=(args.rate, args.repeat_trace), daemon=True)
        producer.start()
        if args.faults == "cycle":
            faults, fault_every = soak.cycle(), args.fault_every
        elif args.faults == "none":
            faults, fault_every = iter([]), run_s
        else:
            faults, fault_every = iter([("broker SIGKILL, 15 s down", soak.kill_broker)]), run_s / 2
        next_fault, next_report, next_lag = fault_every, REPORT_EVERY_S, LAG_EVERY_S
        judge_requests = 0
        while (elapsed := time.monotonic() - started) < run_s:
            if elapsed >= next_fault:
                fault = next(faults, None)
                if fault is not None:
                    soak.inject(*fault, started)
                next_fault = time.monotonic() - started + fault_every
            if elapsed >= next_report:
                soak.report(elapsed)
                next_report, next_lag = elapsed + REPORT_EVERY_S, elapsed + LAG_EVERY_S
            elif elapsed >= next_lag:
                soak.sample_lag(elapsed)
                next_lag = elapsed + LAG_EVERY_S
            if judge is not None:  # the server keeps every request; count them and let them go
                answered = len(judge.requests)
                judge_requests += answered
                del judge.requests[:answered]
            time.sleep(0.5)
        soak._stop.set()
        producer.join(90)
        soak.leave()
        sink.set_mode(SinkMode.OK)
        drain_started = time.monotonic()
        ledger = stack.wait_until_scored(args.drain_minutes * 60)
        drained_s = time.monotonic() - drain_started
        soak.report(time.monotonic() - started)
        records = read_topic(stack.results_bootstrap, stack.results_topic)
        outcomes = Counter(
            f"{d['metric']} {d['outcome']}" for d in map(json.loads, (r.value for r in records))
        )
        if judge is not None:
            judge_requests += len(judge.requests)

    judged = f"slow LLM judge ({args.judge_latency_s:g} s a request)" if judge else "offline judge"
    store = f"{args.store_mb:g} MB" if args.store_mb else "the default cap"
    print(
        f"\n{args.minutes:g} min at {args.rate:g} traces/s, {judged}, faults: {args.faults}, "
        f"page store in memory ({store})"
    )
    print(f"faults injected ({len(soak.faults)}): {', '.join(soak.faults) or 'none'}")
    print(
        f"producer: {soak.producer_errors} sends failed and retried, longest wait for one second's "
        f"traces {soak.producer_stall_s:.0f} s (the producer does not catch up on what it did not send)"
    )
    print(
        f"traces produced {ledger.produced}: {ledger.produced / run_s:.2f}/s produced, "
        f"{ledger.produced / (run_s + drained_s):.2f}/s scored end to end"
        + (f"; judge requests {judge_requests}" if judge else "")
    )
    print("results by metric and outcome: " + ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items())))
    print(f"lost: results {ledger.lost_in_results}, spans {ledger.lost_in_spans}")
    print(f"duplicated: results {ledger.duplicated_results}, spans {ledger.duplicated_spans}")
    print(f"backlog drained {drained_s:.0f} s after the producer stopped")
    print(f"lag back to steady after the broker restart: {soak.recovery_s(args.rate)}")
    print("replicas: " + ", ".join(soak.labels.values()))
    print("\n".join(soak.memory_table(run_s / 2)))
    print(ledger.line())


if __name__ == "__main__":
    main()
