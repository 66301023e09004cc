"""Assert RAG quality inside an app's own test suite, as deepeval's `assert_test` does.

    from evaluators import assert_rag

    def test_refund_answer_is_grounded():
        answer, passages = my_rag("How long do refunds take?")
        assert_rag({"input": "How long do refunds take?", "actual_output": answer,
                    "retrieval_context": passages}, metrics=("faithfulness", "answer_relevancy"))

The judge is chosen like `ragpulse eval` chooses it (an LLM when a base URL or key is configured, else the
offline judge); the pytest plugin's `--ragpulse-judge offline|openai` forces one for the whole run.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from evaluators.evaluate import evaluate
from evaluators.judge_choice import JudgeChoice, JudgeKind, choose_judge, make_judge
from evaluators.judges.base import Judge
from evaluators.metrics.base import Metric
from evaluators.metrics.registry import create_metric
from evaluators.result import CaseResult, MetricResult, Outcome

DEFAULT_METRICS = ("faithfulness", "answer_relevancy")

# Set by the pytest plugin from --ragpulse-judge; None lets the environment decide.
forced_judge: JudgeKind | None = None


def assert_rag(
    case: object,
    metrics: Iterable[str | Metric] = DEFAULT_METRICS,
    *,
    judge: Judge | JudgeKind | None = None,
    threshold: float | None = None,
    custom: Mapping[str, Any] | None = None,
) -> CaseResult:
    """Score one case (a TestCase, a mapping, or a deepeval `LLMTestCase` / ragas `SingleTurnSample`)
    and raise AssertionError listing every metric that failed, errored or could not be measured, with
    score, threshold and reason. Returns the case's results when all passed. `threshold` applies to the
    metrics given by name; `custom` holds custom metric specs (`load_custom_metrics`)."""
    options = {} if threshold is None else {"threshold": threshold}
    chosen = [m if isinstance(m, Metric) else create_metric(m, custom=custom, **options) for m in metrics]
    if not chosen:
        raise ValueError("assert_rag needs at least one metric")
    (result,) = evaluate([case], chosen, resolve_judge(judge), concurrency=1).cases
    problems = [r for r in result.results if r.outcome is not Outcome.PASSED]
    if problems:
        raise AssertionError(failure_message(result.case_id, problems, len(result.results)))
    return result


def resolve_judge(judge: Judge | JudgeKind | None = None) -> Judge:
    """A judge object as is; a kind ("offline" / "openai") or None chosen like `ragpulse eval` does."""
    if judge is not None and not isinstance(judge, str):
        return judge
    choice = choose_judge(judge or forced_judge)
    return _offline_judge() if choice.kind == "offline" else _llm_judge(choice)


def failure_message(case_id: str, problems: list[MetricResult], total: int) -> str:
    lines = [f"ragpulse: {len(problems)} of {total} metric(s) did not pass for case {case_id!r}:"]
    for r in problems:
        score = "" if r.score is None else f", score {r.score:.3f}"
        bound = "at most" if r.lower_is_better else "at least"
        lines.append(
            f"  - {r.name}: {r.outcome.value}{score} (threshold: {bound} {r.threshold:g}): {r.reason}"
        )
    return "\n".join(lines)


@functools.cache
def _offline_judge() -> Judge:
    """One offline judge per process: loading its model costs more than judging a case."""
    return make_judge(choose_judge("offline"))


def _llm_judge(choice: JudgeChoice) -> Judge:
    # Not cached: its HTTP client belongs to the event loop of one `evaluate` call.
    return make_judge(choice)
