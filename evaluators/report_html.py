"""A self-contained HTML report: score distribution per metric (inline SVG) and every verdict per case.

One file with no scripts or external assets, so it can be attached to a CI run as is. Everything that
came from a test case or a judge is HTML-escaped: answers are untrusted text.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from evaluators.case import TestCase
from evaluators.result import CaseResult, EvaluationResult, MetricResult, MetricSummary

_BINS = 10
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
.passed{color:#137333}.failed{color:#b3261e}.error{color:#8a4b00}.unmeasured{color:#666}
.metric{display:inline-block;margin:0 1.5rem 1rem 0}details{margin:.25rem 0}small{color:#666}
.qa{margin:.25rem 0 .5rem 1rem;white-space:pre-wrap}
"""


def render(
    result: EvaluationResult, title: str = "ragpulse evaluation", cases: Iterable[TestCase] = ()
) -> str:
    """The report; `cases` (the evaluated test cases, matched by id) adds each one's question and answer."""
    texts = {case.id: case for case in cases if case.id is not None}
    judge = ", ".join(f"{k}: {v}" for k, v in result.judge.items())
    ragas = "n/a" if result.ragas_score is None else f"{result.ragas_score:.4f}"
    usage = result.usage
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>",
        f"<p>{len(result.cases)} cases; judge {escape(judge)}; ragas_score {ragas}; "
        f"{usage.calls} judge calls, "
        f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens, "
        f"${usage.cost_usd:.4f}</p>",
        "<h2>Metrics</h2>",
        *(_metric_block(summary, result.cases) for summary in result.metrics),
        "<h2>Cases</h2>",
        *(_case_block(case, texts.get(case.case_id)) for case in result.cases),
        "</body></html>",
    ]
    return "\n".join(parts)


def _metric_block(summary: MetricSummary, cases: list[CaseResult]) -> str:
    scores = [r.score for c in cases for r in c.results if r.name == summary.name and r.score is not None]
    mean = "n/a" if summary.mean is None else f"{summary.mean:.4f}"
    rate = "n/a" if summary.pass_rate is None else f"{summary.pass_rate:.1%}"
    counts = ", ".join(f"{outcome}: {n}" for outcome, n in summary.counts.items() if n)
    direction = " (lower is better)" if summary.lower_is_better else ""
    return (
        f"<div class='metric'><h3>{escape(summary.name)}{direction}</h3>"
        f"<p>mean {mean}, pass rate {rate}<br><small>{escape(counts)}</small></p>{histogram(scores)}</div>"
    )


def histogram(scores: list[float], width: int = 300, height: int = 120) -> str:
    """Counts of scores in ten bins over [0, 1]; scores below 0 (negative cosines) join the first bin."""
    counts = [0] * _BINS
    for score in scores:
        counts[min(_BINS - 1, max(0, int(score * _BINS)))] += 1
    tallest = max(counts) or 1
    bar = width / _BINS
    plot = height - 20
    bars = []
    for i, count in enumerate(counts):
        h = plot * count / tallest
        label = f"{i / _BINS:.1f}-{(i + 1) / _BINS:.1f}: {count}"
        bars.append(
            f"<rect x='{i * bar + 1:.1f}' y='{plot - h:.1f}' width='{bar - 2:.1f}' height='{h:.1f}' "
            f"fill='#4a7bd0'><title>{label}</title></rect>"
        )
    axis = (
        f"<text x='0' y='{height - 4}' font-size='10'>0</text>"
        f"<text x='{width - 10}' y='{height - 4}' font-size='10'>1</text>"
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img' "
        f"aria-label='score distribution'>{''.join(bars)}{axis}</svg>"
    )


def _case_block(case: CaseResult, test_case: TestCase | None) -> str:
    rows = "".join(_result_row(r) for r in case.results)
    question = f": {escape(_short(test_case.input))}" if test_case and test_case.input else ""
    return (
        f"<details><summary>case {escape(case.case_id)}{question} — "
        f"{escape(', '.join(f'{r.name} {r.outcome}' for r in case.results))}</summary>"
        f"{_texts(test_case)}"
        "<table><tr><th>metric</th><th>outcome</th><th>score</th><th>reason and verdicts</th></tr>"
        f"{rows}</table>"
        "</details>"
    )


def _result_row(result: MetricResult) -> str:
    score = "" if result.score is None else f"{result.score:.4f}"
    verdicts = "".join(
        f"<tr><td>{escape(v.kind)}</td><td>{escape(v.item)}</td><td>{escape(v.verdict)}</td>"
        f"<td>{escape(v.reason)}</td><td>{escape(', '.join(map(str, v.supporting_ids)))}</td></tr>"
        for v in result.verdicts
    )
    table = (
        "<table><tr><th>kind</th><th>item</th><th>verdict</th><th>reason</th><th>supporting ids</th></tr>"
        f"{verdicts}</table>"
        if verdicts
        else ""
    )
    return (
        f"<tr><td>{escape(result.name)}</td>"
        f"<td class='{escape(result.outcome.value)}'>{escape(result.outcome)}</td>"
        f"<td>{score}</td><td>{escape(result.reason)}{table}</td></tr>"
    )


def _texts(case: TestCase | None) -> str:
    """The case's question and answer in full (escaped: both are untrusted text)."""
    if case is None:
        return ""
    shown = [("question", case.input), ("answer", case.actual_output), ("expected", case.expected_output)]
    return "".join(f"<div class='qa'><b>{label}</b>: {escape(text)}</div>" for label, text in shown if text)


def _short(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
