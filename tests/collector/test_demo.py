"""`ragpulse demo`: one command, no Kafka, no API key, and scores appear."""

from __future__ import annotations

import re
import subprocess
import sys


def test_demo_runs_on_embedded_defaults_and_prints_scores() -> None:
    demo = subprocess.run(
        [
            sys.executable,
            "-m",
            "collector.cli",
            "demo",
            "--duration",
            "8",
            "--rate",
            "10",
            "--otlp-port",
            "0",
            "--otlp-grpc-port",
            "0",
            "--metrics-port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "judge:    offline" in demo.stdout
    assert re.search(r"metrics:  http://127\.0\.0\.1:\d+/metrics", demo.stdout)
    assert re.search(r"page:     http://127\.0\.0\.1:\d+/\n", demo.stdout)
    last = [line for line in demo.stdout.splitlines() if line.startswith("[")][-1]
    scores = dict(re.findall(r"(\w+)=([0-9.]+) \(n=", last))
    assert {"faithfulness", "answer_relevancy", "hallucination"} <= scores.keys()
    assert all(0.0 <= float(v) <= 1.0 for v in scores.values())
