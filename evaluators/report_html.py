"""A self-contained HTML report: a summary per metric, a table of every case, and each case's verdicts.

One file with inline CSS and inline SVG, no scripts and no external assets, so it can be attached to a
CI run as is and opens offline. Outcomes are said in words and in colour (green passed, red failed,
amber error, grey unmeasured), never colour alone. Everything that came from a test case or a judge is
HTML-escaped: answers are untrusted text.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from evaluators.case import TestCase
from evaluators.result import CaseResult, EvaluationResult, MetricResult, MetricSummary, Outcome

_BINS = 10
_OUTCOMES = (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.UNMEASURED)
_STYLE = """
:root{--ink:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa;--pass:#1a7f37;--pass-bg:#dafbe1;
--fail:#cf222e;--fail-bg:#ffebe9;--err:#9a6700;--err-bg:#fff8c5;--na:#59636e;--na-bg:#eff2f5}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);margin:0;background:#fff}
header{background:var(--bg);border-bottom:1px solid var(--line);padding:1.25rem 2rem}
header h1{margin:0 0 .25rem;font-size:1.5rem}
header .meta{color:var(--muted);margin:0}
main{padding:1rem 2rem 3rem;max-width:1200px}
h2{font-size:1.15rem;margin:1.75rem 0 .75rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border-bottom:1px solid var(--line);padding:.4rem .6rem;text-align:left;vertical-align:top}
th{background:var(--bg);font-weight:600;white-space:nowrap}
tbody tr:nth-child(even){background:#fbfcfd}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.outcome{display:inline-block;border-radius:1em;padding:0 .6em;font-size:.85em;font-weight:600;
white-space:nowrap}
.outcome.passed{color:var(--pass);background:var(--pass-bg)}
.outcome.failed{color:var(--fail);background:var(--fail-bg)}
.outcome.error{color:var(--err);background:var(--err-bg)}
.outcome.unmeasured{color:var(--na);background:var(--na-bg)}
.cards{display:flex;flex-wrap:wrap;gap:1rem}
.card{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;width:330px}
.card h3{margin:0;font-size:1rem}
.card .dir{color:var(--muted);font-size:.85em}
.card .big{font-size:1.4rem;font-weight:600;margin:.25rem 0}
.card.has-failures{border-left:4px solid var(--fail)}
.bar{display:flex;height:8px;border-radius:4px;overflow:hidden;background:var(--na-bg);margin:.4rem 0}
.bar .passed{background:var(--pass)}.bar .failed{background:var(--fail)}
.bar .error{background:var(--err)}.bar .unmeasured{background:#afb8c1}
details{border:1px solid var(--line);border-radius:6px;margin:.5rem 0;padding:.25rem .75rem}
details[open]{padding-bottom:.75rem}
summary{cursor:pointer;padding:.25rem 0}
.qa{margin:.25rem 0;white-space:pre-wrap;overflow-wrap:anywhere}
.qa b{color:var(--muted)}
td.reason{white-space:pre-wrap;overflow-wrap:anywhere}
table.verdicts{font-size:.9em;margin-top:.5rem}table.verdicts td:first-child{white-space:nowrap}
small,.muted{color:var(--muted)}
"""


def render(
    result: EvaluationResult, title: str = "ragpulse evaluation", cases: Iterable[TestCase] = ()
) -> str:
    """The report; `cases` (the evaluated test cases, matched by id) adds each one's question and answer."""
    texts = {case.id: case for case in cases if case.id is not None}
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<header><h1>{escape(title)}</h1><p class='meta' id='meta'>{_meta(result)}</p></header><main>",
        "<h2 id='metrics'>Metrics</h2>",
        _metric_table(result.metrics),
        "<div class='cards'>",
        *(_metric_card(summary, result.cases) for summary in result.metrics),
        "</div>",
        "<h2 id='cases'>Cases</h2>",
        _case_table(result),
        "<h2 id='details'>Verdicts per case</h2>",
        *(_case_block(case, texts.get(case.case_id)) for case in result.cases),
        "</main></body></html>",
    ]
    return "\n".join(parts)


def judge_label(judge: dict[str, str]) -> str:
    """`judge: offline (model lexical-v3+wordllama)`: the judge's kind and model, each said once."""
    kind, model = judge.get("judge", ""), judge.get("model", "")
    extra = {k: v for k, v in judge.items() if k not in ("judge", "model") and v}
    label = kind or "unknown"
    details = [f"model {model}"] if model and model != kind else []
    details += [f"{k} {v}" for k, v in extra.items()]
    return f"judge: {label}" + (f" ({', '.join(details)})" if details else "")


def _meta(result: EvaluationResult) -> str:
    usage = result.usage
    ragas = "n/a" if result.ragas_score is None else f"{result.ragas_score:.4f}"
    return escape(
        f"{len(result.cases)} cases · {judge_label(result.judge)} · ragas_score {ragas} · "
        f"{usage.calls} judge calls, {usage.prompt_tokens} prompt + {usage.completion_tokens} completion "
        f"tokens, ${usage.cost_usd:.4f}"
    )


def _direction(lower_is_better: bool) -> str:
    return "lower is better" if lower_is_better else "higher is better"


def _outcome(outcome: Outcome | str, text: str | None = None) -> str:
    value = Outcome(outcome).value
    return f"<span class='outcome {value}'>{escape(text if text is not None else value)}</span>"


def _metric_table(summaries: list[MetricSummary]) -> str:
    heads = "".join(f"<th class='num'>{o.value}</th>" for o in _OUTCOMES)
    rows = []
    for s in summaries:
        mean = "n/a" if s.mean is None else f"{s.mean:.4f}"
        rate = "n/a" if s.pass_rate is None else f"{s.pass_rate:.1%}"
        counts = "".join(f"<td class='num {o.value}'>{s.counts.get(o, 0)}</td>" for o in _OUTCOMES)
        rows.append(
            f"<tr data-metric='{escape(s.name)}'><td>{escape(s.name)}</td>"
            f"<td>{_direction(s.lower_is_better)}</td>"
            f"<td class='num'>{mean}</td><td class='num'>{rate}</td>{counts}</tr>"
        )
    return (
        "<table id='metric-summary'><thead><tr><th>metric</th><th>direction</th><th class='num'>mean</th>"
        f"<th class='num'>pass rate</th>{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _metric_card(summary: MetricSummary, cases: list[CaseResult]) -> str:
    scores = [r.score for c in cases for r in c.results if r.name == summary.name and r.score is not None]
    mean = "n/a" if summary.mean is None else f"{summary.mean:.4f}"
    rate = "n/a" if summary.pass_rate is None else f"{summary.pass_rate:.1%}"
    total = sum(summary.counts.values()) or 1
    bar = "".join(
        f"<span class='{o.value}' style='width:{100 * summary.counts.get(o, 0) / total:.2f}%'></span>"
        for o in _OUTCOMES
    )
    counts = ", ".join(f"{outcome}: {n}" for outcome, n in summary.counts.items() if n)
    failing = " has-failures" if summary.counts.get(Outcome.FAILED) else ""
    return (
        f"<div class='card{failing}' id='metric-{escape(summary.name)}'><h3>{escape(summary.name)}</h3>"
        f"<div class='dir'>{_direction(summary.lower_is_better)}</div>"
        f"<div class='big'>{mean}</div><div>pass rate {rate}</div>"
        f"<div class='bar' role='img' aria-label='{escape(counts)}'>{bar}</div>"
        f"<small>{escape(counts)}</small>{histogram(scores)}</div>"
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


def _case_table(result: EvaluationResult) -> str:
    names = [s.name for s in result.metrics]
    heads = "".join(f"<th>{escape(name)}</th>" for name in names)
    rows = []
    for case in result.cases:
        by_name = case.by_name()
        cells = "".join(_score_cell(by_name.get(name)) for name in names)
        failed = any(r.outcome is Outcome.FAILED for r in case.results)
        link = f"<a href='#case-{escape(case.case_id)}'>{escape(case.case_id)}</a>"
        rows.append(f"<tr class='{'failed' if failed else 'ok'}'><td>{link}</td>{cells}</tr>")
    return (
        f"<table id='case-table'><thead><tr><th>case</th>{heads}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _score_cell(result: MetricResult | None) -> str:
    if result is None:
        return "<td class='muted'>-</td>"
    score = "" if result.score is None else f" {result.score:.2f}"
    return f"<td>{_outcome(result.outcome, result.outcome.value + score)}</td>"


def _case_block(case: CaseResult, test_case: TestCase | None) -> str:
    rows = "".join(_result_row(r) for r in case.results)
    question = f": {escape(_short(test_case.input))}" if test_case and test_case.input else ""
    outcomes = " ".join(_outcome(r.outcome, f"{r.name} {r.outcome.value}") for r in case.results)
    return (
        f"<details id='case-{escape(case.case_id)}'><summary>case {escape(case.case_id)}{question} — "
        f"{outcomes}</summary>"
        f"{_texts(test_case)}"
        "<table><thead><tr><th>metric</th><th>outcome</th><th class='num'>score</th><th>threshold</th>"
        f"<th>reason and verdicts</th></tr></thead><tbody>{rows}</tbody></table>"
        "</details>"
    )


def _result_row(result: MetricResult) -> str:
    score = "" if result.score is None else f"{result.score:.4f}"
    threshold = f"{'≤' if result.lower_is_better else '≥'} {result.threshold:g}"
    verdicts = "".join(
        f"<tr><td>{escape(v.kind)}</td><td>{escape(v.item)}</td><td>{escape(v.verdict)}</td>"
        f"<td>{escape(v.reason)}</td><td>{escape(', '.join(map(str, v.supporting_ids)))}</td></tr>"
        for v in result.verdicts
    )
    table = (
        "<table class='verdicts'><thead><tr><th>kind</th><th>item</th><th>verdict</th><th>reason</th>"
        f"<th>supporting ids</th></tr></thead><tbody>{verdicts}</tbody></table>"
        if verdicts
        else ""
    )
    return (
        f"<tr><td>{escape(result.name)}</td><td>{_outcome(result.outcome)}</td>"
        f"<td class='num'>{score}</td><td>{threshold}</td>"
        f"<td class='reason'>{escape(result.reason)}{table}</td></tr>"
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
