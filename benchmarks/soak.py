"""Soak: the whole stack for a long time with faults on a schedule; does anything leak, stall or get lost?

    python -m benchmarks.soak [--minutes 30] [--rate 20] [--fault-every 120]

A broker of its own (scripts/kafka.sh), two `ragpulse run` replicas in one group with the offline
judge, the results topic and an OTLP sink as exporters, and a producer sending `--rate` RAG traces a
second. Every `--fault-every` seconds the next fault of the cycle is injected:

    replica SIGKILL (restarted 5 s later) · broker SIGKILL (restarted 15 s later) ·
    tracing backend 503 for 30 s · tracing backend hung for 30 s · broker frozen for 20 s ·
    a third replica joins, and leaves (SIGTERM) a fault later

Every 30 s it prints throughput, lag (produced minus committed), each replica's memory (PSS of the
process and its judge workers) and the faults so far; at the end, once the backlog drained, the ledger
of trace ids produced against trace ids scored in both exporters: lost and duplicated evaluations.
"""

from __future__ import annotations

import argparse
import itertools
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from testkit.kafka_broker import FaultyBroker
from testkit.otlp_sink import OtlpSink, SinkMode
from testkit.process import RagpulseProcess, tree_memory_mib
from testkit.reliability import Stack

REPORT_EVERY_S = 30.0


class Soak:
    def __init__(self, stack: Stack, broker: FaultyBroker, sink: OtlpSink) -> None:
        self.stack, self.broker, self.sink = stack, broker, sink
        self.faults: list[str] = []
        self.peak_mib: dict[int, float] = {}
        self.started_by: dict[int, str] = {}  # replica pid -> how it came to run
        self._joined: RagpulseProcess | None = None
        self._stop = threading.Event()

    def produce(self, rate: float) -> None:
        """`rate` traces a second until stopped; a broker outage only delays them (the producer retries)."""
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.stack.produce(max(1, int(rate)))
            except Exception as exc:  # the broker is down: try again next second
                self.faults.append(f"producer: {type(exc).__name__}")
            self._stop.wait(max(0.0, 1.0 - (time.monotonic() - started)))

    def cycle(self) -> itertools.cycle[tuple[str, Callable[[], None]]]:
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
            self.started_by[replica.process.pid] = why
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

    def report(self, started: float) -> None:
        elapsed = time.monotonic() - started
        produced = len(self.stack.produced)
        try:
            lag = produced - self.stack.committed()
        except Exception:
            lag = -1  # the broker is down
        memory = []
        for replica in self.stack.replicas:
            if replica.process is not None and replica.process.poll() is None:
                mib = tree_memory_mib(replica.process.pid)
                self.peak_mib[replica.process.pid] = max(self.peak_mib.get(replica.process.pid, 0.0), mib)
                memory.append(f"{mib:.0f}")
        print(
            f"{elapsed / 60:5.1f} min  produced {produced:6d} ({produced / elapsed:5.1f}/s)  lag {lag:6d}  "
            f"PSS MiB [{', '.join(memory)}]  faults {len(self.faults)}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=20.0, help="traces a second")
    parser.add_argument("--fault-every", type=float, default=120.0, help="seconds between faults")
    parser.add_argument("--drain-minutes", type=float, default=10.0, help="longest wait for the backlog")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ragpulse-soak-") as state, OtlpSink() as sink:
        broker = FaultyBroker(Path(state) / "kafka", watch_pid=os.getpid())
        stack = Stack(broker.bootstrap, sink, metrics=("faithfulness", "answer_relevancy"), partitions=6)
        soak = Soak(stack, broker, sink)
        try:
            soak.start_replica("initial")
            soak.start_replica("initial")
            started = time.monotonic()
            producer = threading.Thread(target=soak.produce, args=(args.rate,), daemon=True)
            producer.start()
            faults = soak.cycle()
            next_fault, next_report = started + args.fault_every, started + REPORT_EVERY_S
            while time.monotonic() - started < args.minutes * 60:
                now = time.monotonic()
                if now >= next_fault:
                    name, inject = next(faults)
                    print(f"  fault: {name}", flush=True)
                    soak.faults.append(name)
                    inject()
                    next_fault = time.monotonic() + args.fault_every
                if now >= next_report:
                    soak.report(started)
                    next_report = now + REPORT_EVERY_S
                time.sleep(0.5)
            soak._stop.set()
            producer.join(30)
            soak.leave()
            sink.set_mode(SinkMode.OK)
            drain_started = time.monotonic()
            ledger = stack.wait_until_scored(args.drain_minutes * 60)
            drained_s = time.monotonic() - drain_started
            soak.report(started)
        finally:
            stack.close()
            broker.stop()
    injected = [f for f in soak.faults if not f.startswith("producer")]
    print(
        f"\n{args.minutes:.0f} min at {args.rate:.0f} traces/s, {len(injected)} faults: {', '.join(injected)}"
    )
    print(
        f"throughput {ledger.produced / (args.minutes * 60):.1f} traces/s produced and scored; backlog "
        f"drained {drained_s:.0f} s after the producer stopped"
    )
    peaks = ", ".join(f"{soak.started_by.get(pid, '?')} {mib:.0f}" for pid, mib in soak.peak_mib.items())
    print(f"peak PSS per replica (process and judge workers), MiB: {peaks}")
    print(ledger.line())


if __name__ == "__main__":
    main()
