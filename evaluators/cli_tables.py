"""What `ragpulse eval` prints and writes: the console tables (scores, unscored reasons, the comparison
with a baseline, agreement with production and with reviewers) and the JSON report."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.table import Table

from evaluators.baseline import Comparison
from evaluators.result import EvaluationResult, Outcome

_UNSCORED = (Outcome.ERROR, Outcome.UNMEASURED)


def summary_table(result: EvaluationResult) -> Table:
    ragas = "n/a" if result.ragas_score is None else f"{result.ragas_score:.4f}"
    usage = result.usage
    table = Table(
        title=f"{len(result.cases)} cases, ragas_score {ragas}",
        caption=f"{usage.calls} judge calls ({usage.cached_calls} cached), {usage.prompt_tokens} prompt + "
        f"{usage.completion_tokens} completion tokens, ${usage.cost_usd:.4f}",
    )
    for column in ("metric", "mean", "pass rate", *(o.value for o in Outcome)):
        table.add_column(column, justify="left" if column == "metric" else "right", no_wrap=True)
    for metric in result.metrics:
        table.add_row(
            metric.name + (" ↓" if metric.lower_is_better else ""),
            "n/a" if metric.mean is None else f"{metric.mean:.4f}",
            "n/a" if metric.pass_rate is None else f"{metric.pass_rate:.1%}",
            *(str(metric.counts.get(o, 0)) for o in Outcome),
        )
    return table


def unscored_reasons(result: EvaluationResult) -> list[str]:
    """Per metric and outcome (error, unmeasured): the most common reason and how often it occurs."""
    lines = []
    for summary in result.metrics:
        for outcome in _UNSCORED:
            reasons = Counter(
                r.reason or "(no reason)"
                for case in result.cases
                for r in case.results
                if r.name == summary.name and r.outcome is outcome
            )
            if reasons:
                reason, count = reasons.most_common(1)[0]
                total = sum(reasons.values())
                lines.append(f"{summary.name} {outcome.value} ({count} of {total}): {reason}")
    return lines


def comparison_table(comparison: Comparison) -> Table:
    table = Table(title="against the baseline")
    columns = ("metric", "mean before", "mean now", "change", "pass rate before", "pass rate now", "change")
    for column in columns:
        table.add_column(column, justify="left" if column == "metric" else "right", no_wrap=True)
    for m in comparison.metrics:
        table.add_row(
            m.name + (" ↓" if m.lower_is_better else ""),
            _number(m.mean_before),
            _number(m.mean_now),
            _change(m.mean_change, "{:+.4f}", worse=m.mean_worse),
            _rate(m.pass_rate_before),
            _rate(m.pass_rate_now),
            _change(
                None if m.pass_rate_change is None else m.pass_rate_change * 100,
                "{:+.1f} pt",
                worse=m.pass_rate_dropped(),
            ),
        )
    changes = comparison.cases
    table.caption = (
        f"{len(comparison.regressions)} regressed, {len(comparison.fixed)} fixed, "
        f"{len(changes) - len(comparison.regressions) - len(comparison.fixed)} other changes"
    )
    return table


def changed_cases(comparison: Comparison) -> list[str]:
    """One line per (case, metric) whose outcome changed, regressions first."""
    order = {"regression": 0, "fixed": 1, "changed": 2}
    lines = []
    for c in sorted(comparison.cases, key=lambda c: (order[c.kind], c.case_id, c.metric)):
        score = f" {_number(c.score_before)} -> {_number(c.score_now)}"
        reason = f": {c.reason}" if c.reason and c.kind != "fixed" else ""
        lines.append(f"{c.kind}: case {c.case_id} {c.metric} {c.before} -> {c.now}{score}{reason}")
    return lines


def production_table(comparison: Comparison, production: EvaluationResult) -> Table:
    """Exported cases re-judged: per metric, production's pass rate, this run's, and how often the
    outcomes agree (a judge or a config that differs from production's shows here first)."""
    table = Table(title=f"against production ({_judges(production)})")
    for column in ("metric", "pass rate in production", "pass rate now", "same outcome"):
        table.add_column(column, justify="left" if column == "metric" else "right", no_wrap=True)
    for m in comparison.metrics:
        paired = comparison.paired.get(m.name, 0)
        table.add_row(
            m.name,
            _rate(m.pass_rate_before),
            _rate(m.pass_rate_now),
            f"{comparison.unchanged.get(m.name, 0)} of {paired}" if paired else "n/a",
        )
    return table


def production_agreement(comparison: Comparison) -> dict[str, dict[str, int]]:
    """The --json report's `production`: per metric, cases scored in both and those with the same outcome."""
    return {
        name: {"cases": paired, "same_outcome": comparison.unchanged.get(name, 0)}
        for name, paired in sorted(comparison.paired.items())
    }


def reviewers_table(now: Comparison, production: Comparison | None, reviewers: EvaluationResult) -> Table:
    """Cases whose outcome a reviewer corrected: per metric, how often this run's judge and production's
    agree with the reviewers, so a change of judge shows whether it comes closer to the people."""
    table = Table(
        title="against reviewers",
        caption="outcomes this run left unscored (error, unmeasured) are not counted",
    )
    for column in ("metric", "reviewed", "pass rate by reviewers", "now agrees", "production agreed"):
        table.add_column(column, justify="left" if column == "metric" else "right", no_wrap=True)
    for m in reviewers.metrics:
        table.add_row(
            m.name,
            str(sum(m.counts.values())),
            _rate(m.pass_rate),
            _agreement(now, m.name),
            _agreement(production, m.name) if production is not None else "n/a",
        )
    return table


def reviewers_agreement(
    now: Comparison, production: Comparison | None, reviewers: EvaluationResult
) -> dict[str, dict[str, Any]]:
    """The --json report's `reviewers`: per metric, the outcomes reviewers gave and, for this run's judge
    (`now`) and production's, the cases paired with a reviewer's outcome and those with the same one."""
    ours = production_agreement(now)
    theirs = production_agreement(production) if production is not None else {}
    return {
        m.name: {
            "reviewed": sum(m.counts.values()),
            "now": ours.get(m.name) or {"cases": 0, "same_outcome": 0},
            "production": theirs.get(m.name) or {"cases": 0, "same_outcome": 0},
        }
        for m in reviewers.metrics
    }


def scored_only(result: EvaluationResult) -> EvaluationResult:
    """The result without its error and unmeasured outcomes: no verdict to agree or disagree with."""
    cases = [
        case.model_copy(update={"results": [r for r in case.results if r.outcome not in _UNSCORED]})
        for case in result.cases
    ]
    return result.model_copy(update={"cases": cases})


def _agreement(comparison: Comparison, metric: str) -> str:
    paired, share = comparison.paired.get(metric, 0), comparison.agreement(metric)
    if share is None:
        return "n/a"
    return f"{comparison.unchanged.get(metric, 0)} of {paired} ({share:.1%})"


def _judges(production: EvaluationResult) -> str:
    judge, model = production.judge.get("judge", "?"), production.judge.get("model", "")
    return f"judged by {judge} {model}".rstrip() if judge != "several" else "judged by several judges"


def report(result: EvaluationResult, comparison: Comparison | None) -> dict[str, Any]:
    """The --json document: the result (readable back as a baseline) and, with --baseline, the comparison."""
    document: dict[str, Any] = result.model_dump(mode="json")
    if comparison is not None:
        document["comparison"] = {
            **comparison.model_dump(mode="json", exclude={"paired", "unchanged"}),
            "agreement": {m.name: comparison.agreement(m.name) for m in comparison.metrics},
            "regressions": len(comparison.regressions),
            "fixed": len(comparison.fixed),
        }
    return document


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _change(value: float | None, form: str, *, worse: bool) -> str:
    if value is None:
        return "n/a"
    text = form.format(value)
    return f"[red]{text}[/red]" if worse else text
