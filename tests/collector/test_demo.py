"""`ragpulse demo`: one command, no Kafka, no API key, and scores appear with their failures, the
direction of each metric, and a summary when `--duration` ends."""

from __future__ import annotations

import re
import subprocess
import sys

LIVE_PART = re.compile(r"(\w+) ([0-9.]+)([↑↓]) (\d+)/(\d+) failed")
SUMMARY_ROW = re.compile(
    r"^  (\w+)\s+failed\s+(\d+) of (\d+)\s+mean ([0-9.]+)  \((higher|lower) is better\)$"
)


def test_demo_prints_failures_directions_and_a_summary() -> None:
    demo = subprocess.run(
        [
            sys.executable,
            "-m",
            "collector.commands.cli",
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
    out = demo.stdout
    assert "judge:    offline" in out
    assert re.search(r"metrics:  http://127\.0\.0\.1:\d+/metrics", out)
    page = re.search(r"page:     (http://127\.0\.0\.1:\d+/)\n", out)
    assert page
    assert "↑ higher is better, ↓ lower is better" in out  # the legend of the live lines

    # The live lines: per metric the mean, its direction and failed/evaluated.
    last = [line for line in out.splitlines() if line.startswith("[")][-1]
    live = {m[0]: m[1:] for m in LIVE_PART.findall(last)}
    assert {"faithfulness", "answer_relevancy", "hallucination"} <= live.keys(), last
    assert live["hallucination"][1] == "↓" and live["faithfulness"][1] == "↑"
    for mean, _arrow, failed, evaluated in live.values():
        assert 0.0 <= float(mean) <= 1.0 and int(failed) <= int(evaluated)

    # The summary once --duration ends: what was sent, records scored, failures per metric with direction.
    summary = out[out.index("ragpulse demo: stopped after") :]
    sent = re.search(r"sent:     (\d+) answers \((\d+) bad by design: \d+ invented, \d+ contradicted, "
                     r"\d+ off-topic\); (\d+) records scored", summary)  # fmt: skip
    assert sent, summary
    answers, bad, records = map(int, sent.groups())
    assert 0 < bad < answers and 0 < records <= answers
    matches = (SUMMARY_ROW.match(line) for line in summary.splitlines())
    rows = {m.group(1): m.groups()[1:] for m in matches if m}
    assert {"faithfulness", "answer_relevancy", "hallucination"} <= rows.keys(), summary
    assert rows["hallucination"][3] == "lower" and rows["faithfulness"][3] == "higher"
    assert int(rows["faithfulness"][0]) > 0  # bad answers by design: faithfulness fails some of them
    assert all(int(evaluated) <= records for _failed, evaluated, _mean, _direction in rows.values())
    assert re.search(r"causes:   \w+ \d+", summary)
    assert f"look:     {page.group(1)}evaluations?failed=1" in summary
