"""`ragpulse eval`: batch-evaluate a file of test cases, for CI.

    ragpulse eval cases.jsonl --metrics faithfulness,answer_relevancy --judge openai \\
        --base-url http://127.0.0.1:8000/v1 --model gpt-4o-mini --json out.json --html out.html \\
        --fail-under 0.8

Exit codes: 0 all metrics at or above --fail-under; 1 some metric's pass rate below it; 2 bad usage or input.
The API key is read only from the environment variable named by --api-key-env (never a flag).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from evaluators.dataset import DatasetError, load_cases
from evaluators.evaluate import evaluate
from evaluators.judges.base import Judge
from evaluators.metrics.base import Metric
from evaluators.metrics.registry import create_metric, metric_names
from evaluators.report_html import render
from evaluators.result import EvaluationResult, Outcome

DEFAULT_METRICS = "faithfulness,answer_relevancy,contextual_precision,contextual_recall"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragpulse eval", description="Batch-evaluate RAG test cases.")
    parser.add_argument(
        "dataset", type=Path, help="test cases: .jsonl, .json or .csv (deepeval or ragas names)"
    )
    parser.add_argument(
        "--metrics", default=DEFAULT_METRICS, help=f"comma-separated; known: {', '.join(metric_names())}"
    )
    parser.add_argument("--judge", choices=["openai", "offline"], default="openai")
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
    parser.add_argument("--json", type=Path, dest="json_out", help="write the full results as JSON")
    parser.add_argument("--html", type=Path, dest="html_out", help="write a self-contained HTML report")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (logs, non-TTY CI)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console(stderr=True)
    try:
        cases = load_cases(args.dataset)
        metrics = make_metrics(args.metrics, args.threshold)
        judge = make_judge(args)
    except (DatasetError, ValueError, ImportError) as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    result = run(cases, metrics, judge, args.concurrency, show_progress=not args.no_progress, console=console)
    Console(width=None if sys.stdout.isatty() else 120).print(summary_table(result))
    if args.json_out:
        args.json_out.write_text(result.model_dump_json(indent=2), encoding="utf-8")
    if args.html_out:
        args.html_out.write_text(render(result), encoding="utf-8")
    return exit_code(result, args.fail_under, console)


def make_metrics(names: str, threshold: float | None) -> list[Metric]:
    options = {} if threshold is None else {"threshold": threshold}
    chosen = [name.strip() for name in names.split(",") if name.strip()]
    if not chosen:
        raise ValueError("no metrics chosen")
    return [create_metric(name, **options) for name in chosen]


def make_judge(args: argparse.Namespace) -> Judge:
    if args.judge == "offline":
        from evaluators.offline import OfflineJudge  # lazy: the offline model is heavy and optional

        return OfflineJudge()
    from evaluators.judges.openai_judge import OpenAIJudge

    return OpenAIJudge(
        args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        timeout_s=args.timeout,
        embedding_model=args.embedding_model,
    )


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


def exit_code(result: EvaluationResult, fail_under: float | None, console: Console) -> int:
    if fail_under is None:
        return 0
    below = [m for m in result.metrics if m.pass_rate is None or m.pass_rate < fail_under]
    for metric in below:
        rate = "n/a" if metric.pass_rate is None else f"{metric.pass_rate:.1%}"
        console.print(f"[red]{metric.name}: pass rate {rate} is under --fail-under {fail_under:.1%}[/red]")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
