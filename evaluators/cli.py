"""`ragpulse eval`: batch-evaluate a file of test cases, for CI.

    ragpulse eval cases.jsonl --metrics faithfulness,answer_relevancy \\
        --base-url http://127.0.0.1:8000/v1 --model gpt-4o-mini --json out.json --html out.html \\
        --fail-under 0.8 --baseline main.json --fail-on-regression

The judge is chosen like `ragpulse run` chooses it (evaluators.judge_choice): an LLM judge when a base URL
or an API key is configured, else the offline judge; `--judge` forces one. The API key is read only from
the environment variable named by --api-key-env (never a flag). `ragpulse eval --config ragpulse.yaml`
takes the sidecar's judge from that file, built by the sidecar's own code (`--judge` or `--base-url`
still win), with its custom criteria and metric options.

Cases exported by `ragpulse export-cases` carry what production scored: without `--metrics` those
metrics are re-judged, and a table says how often CI's outcome agrees with production's; on cases a
reviewer corrected (`export-cases --corrected`), another says how often each agrees with the reviewers.

Exit codes: 0 all good; 1 a metric's pass rate is under --fail-under, or (with --fail-on-regression) a
regression against --baseline; 2 bad usage or input, or no result could be scored (every one an error or
unmeasured: the most common reason is printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evaluators.baseline import BaselineError, compare, load_baseline
from evaluators.case import CaseField
from evaluators.cli_tables import (
    changed_cases,
    comparison_table,
    production_agreement,
    production_table,
    report,
    reviewers_agreement,
    reviewers_table,
    scored_only,
    summary_table,
    unscored_reasons,
)
from evaluators.dataset import (
    DatasetError,
    load_cases,
    production_metrics,
    production_result,
    reviewers_result,
    with_baseline_answers,
)
from evaluators.evaluate import evaluate
from evaluators.judge_choice import (
    JudgeChoiceError,
    SidecarJudging,
    SidecarReader,
    choose_judge,
    make_judge,
)
from evaluators.judges.base import Judge
from evaluators.metrics.base import Metric
from evaluators.metrics.custom import CustomMetrics, load_custom_metrics, load_sidecar_metrics
from evaluators.metrics.registry import canonical_name, create_metric, metric_names, required_inputs
from evaluators.report_html import render
from evaluators.result import EvaluationResult, Outcome

DEFAULT_METRICS = "faithfulness,answer_relevancy,contextual_precision,contextual_recall"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragpulse eval", description="Batch-evaluate RAG test cases.")
    parser.add_argument(
        "dataset", type=Path, help="test cases: .jsonl, .json or .csv (deepeval or ragas names)"
    )
    parser.add_argument(
        "--metrics",
        default=None,
        help="comma-separated (ragas names too); default: the metrics production scored on exported "
        f"cases, else {DEFAULT_METRICS}; known: {', '.join(metric_names())}",
    )
    parser.add_argument(
        "--config",
        type=Path,
        help="the sidecar's config file: its judge (`ragpulse eval`), custom_metrics and metrics.options "
        "(thresholds) apply, so cases score as the sidecar scored them",
    )
    parser.add_argument(
        "--custom-metrics",
        type=Path,
        help="YAML file with a top-level custom_metrics: section (the sidecar's config file works)",
    )
    parser.add_argument(
        "--judge",
        choices=["openai", "offline", "offline-learned"],
        default=None,
        help="default: openai when --base-url, OPENAI_BASE_URL or the API key is set, else offline; "
        "offline-learned: the offline judge with the learned grounding model (docs/grounding-model.md)",
    )
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL or OpenAI)")
    parser.add_argument("--model", default="gpt-4o-mini", help="judge model name")
    parser.add_argument("--embedding-model", default="text-embedding-3-small")
    parser.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key"
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per judge request")
    parser.add_argument("--threshold", type=float, default=None, help="pass threshold for every metric")
    parser.add_argument("--concurrency", type=int, default=8, help="cases evaluated at once")
    parser.add_argument(
        "--fail-under", type=float, default=None, help="exit 1 if a metric's pass rate is below"
    )
    parser.add_argument(
        "--baseline", type=Path, help="an earlier --json report: print per-metric and per-case changes"
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --baseline: exit 1 if a case regressed or a pass rate dropped beyond --tolerance",
    )
    parser.add_argument(
        "--tolerance", type=float, default=0.0, help="pass-rate drop allowed by --fail-on-regression (0.05)"
    )
    parser.add_argument(
        "--pairwise-against",
        type=Path,
        metavar="BASELINE_CASES",
        help="the same cases answered by another run: adds pairwise_preference (this run's answer vs "
        "that one, judged in both orders), matched by case id",
    )
    parser.add_argument("--json", type=Path, dest="json_out", help="write the full results as JSON")
    parser.add_argument("--html", type=Path, dest="html_out", help="write a self-contained HTML report")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (logs, non-TTY CI)")
    return parser


def main(argv: list[str] | None = None, read_config: SidecarReader | None = None) -> int:
    """`read_config`: how `ragpulse eval` reads a sidecar config (its judge included); without it,
    `--config` gives only the criteria and metric options (this package never imports the collector)."""
    args = build_parser().parse_args(argv)
    console = Console(stderr=True)
    try:
        cases = load_cases(args.dataset)
        sidecar = _sidecar(args, read_config)
        custom, options = (sidecar.custom, sidecar.options) if sidecar else ({}, {})
        if args.custom_metrics:
            custom = {**custom, **load_custom_metrics(args.custom_metrics)}
        names = args.metrics or _default_metrics(cases, sidecar, custom, console)
        if args.pairwise_against:
            cases = with_baseline_answers(cases, load_cases(args.pairwise_against))
            if "pairwise_preference" not in map(canonical_name, names.split(",")):
                names += ",pairwise_preference"
        metrics = make_metrics(names, args.threshold, custom, options)
        baseline = load_baseline(args.baseline) if args.baseline else None
        judge, description = _judge(args, sidecar)
    except (DatasetError, BaselineError, JudgeChoiceError, ValueError, ImportError) as error:
        say(console, f"[red]error:[/red] {escape(str(error))}")
        return 2
    say(console, escape(description))
    outbound = sidecar.outbound if sidecar is not None and judge is sidecar.judge else None
    judged = [outbound(case) for case in cases] if outbound is not None else cases  # what run's judge sees
    result = run(
        judged, metrics, judge, args.concurrency, show_progress=not args.no_progress, console=console
    )
    out = Console(width=None if sys.stdout.isatty() else 120)
    out.print(summary_table(result))
    for line in unscored_reasons(result):
        out.print(escape(line), soft_wrap=True)
    production = production_result(cases)
    against_production = compare(result, production) if production is not None else None
    if production is not None and against_production is not None:
        out.print(production_table(against_production, production))
    against_reviewers = _against_reviewers(cases, result, production, out)
    comparison = compare(result, baseline) if baseline is not None else None
    if comparison is not None:
        out.print(comparison_table(comparison))
        for line in changed_cases(comparison):
            out.print(escape(line), soft_wrap=True)
    if args.json_out:
        document = report(result, comparison)
        if against_production is not None:
            document["production"] = production_agreement(against_production)
        if against_reviewers is not None:
            document["reviewers"] = against_reviewers
        args.json_out.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    if args.html_out:
        args.html_out.write_text(render(result, cases=cases), encoding="utf-8")
    code = exit_code(result, args.fail_under, console)
    if code != 2 and comparison is not None and args.fail_on_regression:
        failures = comparison.failures(args.tolerance)
        for line in failures:
            say(console, f"[red]regression:[/red] {escape(line)}")
        code = max(code, 1 if failures else 0)
    return code


def _against_reviewers(
    cases: list[Any], result: EvaluationResult, production: EvaluationResult | None, out: Console
) -> dict[str, dict[str, Any]] | None:
    """Cases whose outcome reviewers corrected (`export-cases --corrected`): prints how often this run's
    judge and production's agree with the people; returns those figures for --json (None: no such case)."""
    reviewers = reviewers_result(cases)
    if reviewers is None:
        return None
    now = compare(scored_only(result), reviewers)
    then = compare(production, reviewers) if production is not None else None
    out.print(reviewers_table(now, then, reviewers))
    return reviewers_agreement(now, then, reviewers)


def _sidecar(args: argparse.Namespace, read_config: SidecarReader | None) -> SidecarJudging | None:
    """The sidecar config's judging: read by the collector's code when it gave a reader."""
    if args.config is None:
        return None
    if read_config is not None:
        return read_config(args.config, args.judge is None and args.base_url is None)
    custom, options = load_sidecar_metrics(args.config)
    return SidecarJudging(None, "", custom, options)


def _judge(args: argparse.Namespace, sidecar: SidecarJudging | None) -> tuple[Judge, str]:
    """The config's judge unless `--judge`/`--base-url` name one (or there is no reader of its judge)."""
    if sidecar is not None and sidecar.judge is not None:
        return sidecar.judge, sidecar.description
    choice = choose_judge(args.judge, model=args.model, base_url=args.base_url, api_key_env=args.api_key_env)
    return make_judge(choice, timeout_s=args.timeout, embedding_model=args.embedding_model), choice.describe()


def _default_metrics(
    cases: list[Any], sidecar: SidecarJudging | None, custom: CustomMetrics, console: Console
) -> str:
    """What production scored on exported cases (those this run can score), else what the sidecar's
    config samples, else the default set. Left out, and named: a custom criterion this run does not know,
    and a conversation metric when no case holds a conversation's turns (an export holds one answer)."""
    conversations = any(case.has(CaseField.TURNS) for case in cases)
    known: list[str] = []
    unknown: list[str] = []
    whole: list[str] = []
    for name in production_metrics(cases):
        try:
            inputs = required_inputs(name, custom)
        except ValueError:  # not a built-in metric, nor one of the criteria given
            unknown.append(name)
            continue
        (whole if CaseField.TURNS in inputs and not conversations else known).append(name)
    if unknown:
        say(
            console,
            f"not re-judged: {escape(', '.join(unknown))} (custom criteria: give the sidecar's --config)",
        )
    if whole:
        say(
            console,
            f"not re-judged: {escape(', '.join(whole))} (judged on whole conversations; each case "
            "holds one answer)",
        )
    sampled = sidecar.metrics if sidecar is not None else ()
    return ",".join(known or sampled) or DEFAULT_METRICS


def say(console: Console, line: str) -> None:
    """One line on stderr, never wrapped (CI logs and tests read it whole)."""
    console.print(line, soft_wrap=True, highlight=False)


def make_metrics(
    names: str,
    threshold: float | None,
    custom: CustomMetrics | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Metric]:
    """Metrics by name; each takes its configured options (`--config`), and `--threshold` over them."""
    override = {} if threshold is None else {"threshold": threshold}
    chosen = [name.strip() for name in names.split(",") if name.strip()]
    if not chosen:
        raise ValueError("no metrics chosen")
    configured = options or {}
    return [create_metric(name, custom=custom, **{**configured.get(name, {}), **override}) for name in chosen]


def run(
    cases: list,
    metrics: list[Metric],
    judge: Judge,
    concurrency: int,
    *,
    show_progress: bool,
    console: Console,
) -> EvaluationResult:
    if not show_progress:
        return evaluate(cases, metrics, judge, concurrency=concurrency)
    columns = (TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("cases", total=len(cases))
        return evaluate(
            cases, metrics, judge, concurrency=concurrency, on_case=lambda _case: progress.advance(task)
        )


def exit_code(result: EvaluationResult, fail_under: float | None, console: Console) -> int:
    outcomes = Counter(r.outcome for case in result.cases for r in case.results)
    if outcomes and not outcomes[Outcome.PASSED] and not outcomes[Outcome.FAILED]:
        reasons = Counter(r.reason for case in result.cases for r in case.results if r.reason)
        common = f"; most common ({reasons.most_common(1)[0][1]}×): {reasons.most_common(1)[0][0]}"
        say(
            console,
            f"[red]error:[/red] no result could be scored ({outcomes[Outcome.ERROR]} error, "
            f"{outcomes[Outcome.UNMEASURED]} unmeasured){escape(common) if reasons else ''}",
        )
        return 2
    if fail_under is None:
        return 0
    below = [m for m in result.metrics if m.pass_rate is None or m.pass_rate < fail_under]
    for metric in below:
        rate = "n/a" if metric.pass_rate is None else f"{metric.pass_rate:.1%}"
        say(console, f"[red]{metric.name}: pass rate {rate} is under --fail-under {fail_under:.1%}[/red]")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
