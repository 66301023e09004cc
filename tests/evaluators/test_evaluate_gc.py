"""What evaluate() costs beyond its metrics. `fewer_collections`: it raises the garbage collector's
thresholds while it runs, and puts back what was there when the last overlapping evaluation ends.
And it never formats its result (asyncio.run would, through its Ctrl-C handler, on the main thread)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from evaluators import Faithfulness, evaluate
from evaluators.evaluate import FEWER_COLLECTIONS, fewer_collections
from evaluators.offline import OfflineJudge
from evaluators.result import EvaluationResult


@pytest.fixture(autouse=True)
def default_thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_raised_while_evaluating_and_put_back_after() -> None:
    seen: list[tuple[int, int, int]] = []
    case = {
        "input": "How tall is the Eiffel Tower?",
        "actual_output": "The Eiffel Tower is 330 metres tall.",
        "retrieval_context": ["The Eiffel Tower in Paris is 330 metres tall."],
    }
    result = evaluate(
        [case], [Faithfulness()], OfflineJudge(), on_case=lambda _: seen.append(gc.get_threshold())
    )
    assert result.cases[0].results[0].score == 1.0
    assert seen == [FEWER_COLLECTIONS]
    assert gc.get_threshold() == (700, 10, 10)


def test_overlapping_evaluations_restore_once_the_last_ends() -> None:
    first, second = fewer_collections(), fewer_collections()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold() == FEWER_COLLECTIONS
    second.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)


def test_never_lowered_and_collection_left_off() -> None:
    gc.set_threshold(50_000, 5, 100)
    with fewer_collections():
        assert gc.get_threshold() == (50_000, 20, 100)
    assert gc.get_threshold() == (50_000, 5, 100)
    gc.set_threshold(0, 10, 10)  # automatic collection off: stays off
    with fewer_collections():
        assert gc.get_threshold() == (0, 10, 10)


def test_a_change_made_meanwhile_is_kept() -> None:
    with fewer_collections():
        gc.set_threshold(1_000, 10, 10)
    assert gc.get_threshold() == (1_000, 10, 10)


def test_the_result_is_never_formatted(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the main thread, asyncio.run restores Ctrl-C's handler through `signal.getsignal`, which
    formats the handler, and with it the main task and the task's result, into an error message it
    discards: a whole EvaluationResult, ~0.9 ms per case, if the result were the task's."""
    formatted: list[str] = []
    monkeypatch.setattr(EvaluationResult, "__repr__", lambda self: formatted.append("repr") or "result")
    case = {
        "input": "How tall is the Eiffel Tower?",
        "actual_output": "The Eiffel Tower is 330 metres tall.",
        "retrieval_context": ["The Eiffel Tower in Paris is 330 metres tall."],
    }
    result = evaluate([case], [Faithfulness()], OfflineJudge())
    assert result.cases[0].results[0].score == 1.0
    assert formatted == []
