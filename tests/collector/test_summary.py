"""`ragpulse run` says every `summary_interval_s` whether traces arrive and get scored; `--quiet` stops it."""

from __future__ import annotations

import time

from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import encode, make_spans


def test_summary_line_counts_what_arrived_and_quiet_turns_it_off() -> None:
    env = {"RAGPULSE_SUMMARY_INTERVAL_S": "0.5"}
    with RagpulseProcess("--quiet-period", "0.2", env=env) as ragpulse:
        assert post_traces(ragpulse.otlp_port, encode(make_spans("openinference")))[0] == 200
        deadline = time.monotonic() + 30
        while (
            "evaluations (" not in ragpulse.output() or " 0 evaluations" in ragpulse.output().splitlines()[-1]
        ):
            assert time.monotonic() < deadline, ragpulse.output()[-2000:]
            time.sleep(0.3)
    lines = [line for line in ragpulse.output().splitlines() if "totals:" in line]
    assert "1 traces (1 with RAG data" in lines[-1] and "judge offline" in lines[-1], lines[-1]
    with RagpulseProcess("--quiet", env=env) as quiet:
        time.sleep(1.5)
    assert "totals:" not in quiet.output()
