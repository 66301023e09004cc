"""`ragpulse replay`: a bounded run over a time range of the topic, its destinations and its report.

A replay re-scores what it reads whatever was scored before (its duplicate filter starts empty), so it
must write somewhere that outlives the process: `replay_destinations` says where, and the CLI refuses
when there is nowhere. `report` prints what was read, scored, exported and skipped, by the reasons the
pipeline already counts.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from collector.config import Settings
from collector.metrics import DEAD_LETTERS, DROPPED, EXPORT_ERRORS, SAMPLING_DECISIONS, TRACES
from collector.page.metrics import STORE_DROPPED
from collector.pipeline.service import Service, serve
from collector.receivers.replay import KafkaReplayReceiver
from evaluators.redaction import without_credentials


def replay_destinations(settings: Settings) -> list[str]:
    """Where a replay's scores outlive it: Prometheus and an in-memory page end with the process."""
    results, page = settings.results, settings.page
    spans, phoenix = settings.otel_export.endpoint, settings.phoenix.endpoint
    return [
        *([f"results topic {results.topic}"] if results.bootstrap_servers else []),
        *([f"evaluation spans and log events at {without_credentials(spans)}"] if spans else []),
        *([f"Phoenix at {without_credentials(phoenix)}"] if phoenix else []),
        *([f"page store {page.store_path}"] if page.enabled and page.store_path else []),
    ]


def _counts(metric: object, label: str) -> Counter[str]:
    """A counter's totals by one label, read from the registry (a replay's process starts them at 0)."""
    totals = Counter[str]()
    for family in metric.collect():  # type: ignore[attr-defined]
        for sample in family.samples:
            if sample.name.endswith("_total") and sample.value:
                totals[sample.labels[label]] += int(sample.value)
    return totals


def skipped_counts() -> Counter[str]:
    """Why input went unscored, by the reasons the pipeline counts (`ragpulse_traces`,
    `ragpulse_sampling_decisions`, `ragpulse_dropped`, `ragpulse_dead_letters`); an invalid trace is
    counted once, by the reason its dead letter names."""
    traces, decisions = _counts(TRACES, "state"), _counts(SAMPLING_DECISIONS, "decision")
    return Counter[str](
        {
            **({"no_rag_data": traces["no_rag_data"]} if traces["no_rag_data"] else {}),
            **{d: decisions[d] for d in ("not_sampled", "throttled", "over_budget") if decisions[d]},
            **_counts(DROPPED, "reason"),
            **{f"dead_letter_{r}": n for r, n in _counts(DEAD_LETTERS, "reason").items()},
        }
    )


def undelivered_counts() -> Counter[str]:
    """Results an exporter failed to deliver, by exporter (`ragpulse_export_errors`, the page's drops)."""
    failed = _counts(EXPORT_ERRORS, "exporter")
    failed.pop("dead_letters", None)
    failed["store"] += sum(_counts(STORE_DROPPED, "reason").values())
    return +failed


async def replay(service: Service) -> None:
    """Run until the replay receiver reached the end of its range and every record it read is done."""
    receiver = service.receiver
    assert isinstance(receiver, KafkaReplayReceiver)
    stop = asyncio.Event()
    runner = asyncio.create_task(serve(service, stop))
    while not runner.done() and not (receiver.finished.is_set() and receiver.tracker.in_flight() == 0):
        await asyncio.sleep(0.2)
    stop.set()
    await runner


def report(service: Service, span: str, destinations: list[str]) -> int:
    """What a replay did, on stdout; 1 when an exporter failed to deliver some of it."""

    def listed(counts: Counter[str]) -> str:
        return ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items())) or "none"

    tally = service.tally
    assert tally is not None
    results = sum(tally.outcomes.values())
    undelivered = undelivered_counts()
    print(f"ragpulse replay {span}: read {service.receiver.records_read} records")  # type: ignore[attr-defined]
    scored = f"{len(tally.traces)} traces ({tally.records} generations)"
    print(f"  scored {scored}: {results} results ({listed(tally.outcomes)})")
    print(f"  exported {results} results to {', '.join(destinations)}")
    print(f"  skipped: {listed(skipped_counts())}")
    if undelivered:
        print(f"  not delivered: {listed(undelivered)} (ragpulse_export_errors; see the log)")
    return 1 if undelivered else 0
