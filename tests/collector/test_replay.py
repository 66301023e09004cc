"""`ragpulse replay`: re-evaluate a time range of the topic, outside the consumer group, into the
configured exporters (here the results topic and the page's store file). test_replay_backfill.py: a
replay right after `ragpulse run` scored the same range, and the refusal with nowhere to write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from kafka import KafkaConsumer
from kafka.structs import TopicPartition

from tests.collector.test_pipeline_e2e import _produce, _values


def now() -> str:
    return datetime.now(UTC).isoformat()


def replay(
    bootstrap: str, topic: str, start: str, end: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "collector.commands.cli",
            "replay",
            "--kafka-bootstrap",
            bootstrap,
            "--topic",
            topic,
            "--from",
            start,
            "--to",
            end,
            "--metrics-port",
            "0",
            "--quiet-period",
            "0.2",
        ],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_replay_evaluates_exactly_the_time_range(kafka_bootstrap: str, kafka_topic, tmp_path: Path) -> None:
    topic, results = kafka_topic(partitions=2), kafka_topic()
    _produce(kafka_bootstrap, topic, total=10, hallucinated=0)  # before the range
    time.sleep(1.0)
    start = now()
    _produce(kafka_bootstrap, topic, total=30, hallucinated=5)  # the range
    time.sleep(1.0)
    end = now()
    _produce(kafka_bootstrap, topic, total=10, hallucinated=0)  # after the range
    env = {
        "RAGPULSE_RESULTS__BOOTSTRAP_SERVERS": kafka_bootstrap,
        "RAGPULSE_RESULTS__TOPIC": results,
        "RAGPULSE_PAGE__STORE_PATH": str(tmp_path / "page.db"),
    }
    replayed = replay(kafka_bootstrap, topic, start, end, env)
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    lines = replayed.stdout.splitlines()
    assert lines[0] == f"ragpulse replay {start} .. {end}: read 30 records", replayed.stdout
    assert lines[1].startswith("  scored 30 traces (30 generations): 150 results (failed "), replayed.stdout
    assert lines[2] == f"  exported 150 results to results topic {results}, page store {tmp_path / 'page.db'}"
    assert lines[3] == "  skipped: none"
    faithfulness = [
        r for r in (json.loads(v) for v in _values(kafka_bootstrap, results)) if r["metric"] == "faithfulness"
    ]
    assert len({r["trace_id"] for r in faithfulness}) == 30
    assert sum(r["outcome"] == "failed" for r in faithfulness) >= 4
    # The page's store file kept them too: what `ragpulse export-cases --store` reads.
    exported = subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", "export-cases", "--store", str(tmp_path / "page.db"),
         "--metric", "faithfulness", "--all"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert len(exported.stdout.splitlines()) == 30
    group = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id="ragpulse")
    assert group.committed(TopicPartition(topic, 0)) is None  # the production group was never touched
    group.close()


def test_replay_without_kafka_is_a_usage_error() -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", "replay", "--from", "2026-01-01T00:00:00Z"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "needs --kafka-bootstrap" in refused.stderr
