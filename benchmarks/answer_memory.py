"""What the sidecar keeps in memory per evaluated answer, in its two indexes that outlive the record:
the duplicate filter (`sampling/dedup.py`, every answer of the last `evaluation.dedup_window_s`) and
the feedback join (`feedback/agreement.py`, the last `feedback.max_traces` answers' verdicts).

    python -m benchmarks.answer_memory [--answers 20000]

Each answer is scored on the five default metrics, its metric names read as the sidecar reads them
(unpickled from a judge worker: a new string object for every result), its ids as on the wire (32
and 16 hex characters). Python's allocations are traced from before the answers are made until they
are dropped, so what remains is what the index keeps: its entries, and the ids and names they hold.
Printed per answer and at the default bounds (600 s at 100 answers a second; 50,000 answers).
"""

from __future__ import annotations

import argparse
import gc
import pickle
import random
import tracemalloc
import uuid
from collections.abc import Callable

from collector.feedback.agreement import FeedbackJoin
from collector.records import RagRecord
from collector.sampling.dedup import RecentEvaluations
from collector.sampling.sampler import SamplingConfig
from collector.stages import Evaluation, Outcome

Answer = tuple[RagRecord, list[Evaluation]]


def answers(count: int) -> list[Answer]:
    made: list[Answer] = []
    metrics = SamplingConfig().metrics
    for _ in range(count):
        record = RagRecord(
            trace_id=uuid.uuid4().hex, anchor_span_id=uuid.uuid4().hex[:16], query="q", response="a", nodes=()
        )
        evaluations = [
            Evaluation(
                pickle.loads(pickle.dumps(metric)), Outcome.PASSED, random.random(), "", 0.5, False, "", ""
            )
            for metric in metrics
        ]
        made.append((record, evaluations))
    return made


def bytes_per_answer(count: int, index: Callable[[list[Answer]], object]) -> float:
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    made = answers(count)
    kept = index(made)
    del made
    gc.collect()
    size = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    del kept
    return size / count


def duplicate_filter(made: list[Answer]) -> RecentEvaluations:
    recent = RecentEvaluations()
    for record, evaluations in made:
        recent.add((record.trace_id, record.anchor_span_id), (e.metric for e in evaluations), 1.0)
    return recent


def feedback_join(made: list[Answer]) -> FeedbackJoin:
    join = FeedbackJoin()
    for record, evaluations in made:
        join.evaluated(record, evaluations)
    return join


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=20_000)
    args = parser.parse_args()
    for name, index, at_bound in (
        ("duplicate filter", duplicate_filter, 600 * 100),
        ("feedback join", feedback_join, 50_000),
    ):
        per_answer = bytes_per_answer(args.answers, index)
        print(
            f"{name}: {per_answer:,.0f} bytes per answer; {at_bound:,} answers = "
            f"{per_answer * at_bound / 2**20:,.1f} MiB"
        )


if __name__ == "__main__":
    main()
