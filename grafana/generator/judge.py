"""The "Judge cost" dashboard: what the LLM judge costs and how well it answers.

Money first (dollars and tokens per hour, budget left), then reliability (errors, latency), then the
offline-first cascade that keeps most evaluations away from the paid judge.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import timeseries
from grafana_foundation_sdk.builders.dashboard import Dashboard

from grafana.generator.common import (
    label_variable,
    latency_quantiles,
    new_dashboard,
    query,
    ranking_table,
    rates_by,
    row,
    share_panel,
    stat_panel,
    sum_rate,
    time_series,
)

UID = "ragpulse-judge"
JUDGE_MODEL = 'judge=~"$judge", model=~"$model"'
JUDGE_ERROR_SHARE = 0.1  # RagpulseJudgeErrorRate's threshold
CANARY_AGREEMENT = 0.8  # RagpulseJudgeDrift's threshold


def build() -> Dashboard:
    return (
        new_dashboard(UID, "Judge cost", "Requests, errors, latency, tokens and dollars of the LLM judge.")
        .with_variable(label_variable("judge", "Judge", "label_values(ragpulse_judge_requests_total, judge)"))
        .with_variable(
            label_variable(
                "model", "Model", 'label_values(ragpulse_judge_requests_total{judge=~"$judge"}, model)'
            )
        )
        .with_row(row("Spend"))
        .with_panel(
            stat_panel(
                "Dollars per hour",
                "Judge spend rate over the last hour, selected judges and models.",
                f"sum(rate(ragpulse_judge_cost_usd_total{{{JUDGE_MODEL}}}[1h])) * 3600",
                unit="currencyUSD",
            )
        )
        .with_panel(
            stat_panel(
                "Dollars in the time range",
                "Judge spend over the dashboard's time range, selected judges and models.",
                f"sum(increase(ragpulse_judge_cost_usd_total{{{JUDGE_MODEL}}}[$__range]))",
                unit="currencyUSD",
            )
        )
        .with_panel(
            stat_panel(
                "Tokens per hour",
                "Prompt and completion tokens over the last hour.",
                f"sum(rate(ragpulse_judge_tokens_total{{{JUDGE_MODEL}}}[1h])) * 3600",
            )
        )
        .with_panel(
            stat_panel(
                "Budget left",
                "Share of the current budget window left, lowest instance "
                "(1 when no budget is configured). At 0 sampled traces are skipped as over_budget.",
                "min(ragpulse_judge_budget_remaining_ratio)",
                unit="percentunit",
            )
            .min(0)
            .max(1)
        )
        .with_panel(
            time_series(
                "Dollars per hour by judge and model",
                "Judge spend rate per judge (llm, offline, ...) and model, stacked: the total is the "
                "whole judge bill.",
                [
                    query(
                        sum_rate("ragpulse_judge_cost_usd_total", "judge, model", JUDGE_MODEL) + " * 3600",
                        "{{judge}} {{model}}",
                    )
                ],
                unit="currencyUSD",
                stacked=True,
            )
        )
        .with_panel(
            ranking_table(
                "Spend by judge and model",
                "Dollars per judge and model over the dashboard's time range, largest first.",
                "sort_desc(sum by (judge, model) "
                f"(increase(ragpulse_judge_cost_usd_total{{{JUDGE_MODEL}}}[$__range])))",
                ["judge", "model"],
                "USD",
                unit="currencyUSD",
            )
        )
        .with_panel(
            time_series(
                "Tokens per hour",
                "Tokens per hour by model and kind (prompt, completion).",
                [
                    query(
                        sum_rate("ragpulse_judge_tokens_total", "model, kind", JUDGE_MODEL) + " * 3600",
                        "{{model}} {{kind}}",
                    )
                ],
                stacked=True,
            )
        )
        .with_panel(
            time_series(
                "Budget left",
                "Share of the budget window left, per instance.",
                [query("ragpulse_judge_budget_remaining_ratio", "{{instance}}")],
                unit="percentunit",
                max_value=1,
            )
        )
        .with_panel(
            time_series(
                "Cascade",
                "Evaluations settled by the offline judge alone vs escalated to the LLM judge.",
                [query("sum by (stage) (rate(ragpulse_cascade_total[$__rate_interval]))", "{{stage}}")],
                unit="reqps",
                stacked=True,
                width=24,
            )
        )
        .with_row(row("Reliability"))
        .with_panel(
            rates_by(
                "Requests by outcome",
                "Judge requests per second: ok, error, timeout, rate_limited, invalid "
                "(answer did not match the JSON schema).",
                "ragpulse_judge_requests_total",
                "outcome",
                JUDGE_MODEL,
            )
        )
        .with_panel(
            share_panel(
                "Failed request share",
                "Non-ok share of judge requests per judge and model over 10 minutes; "
                "the dashed line is the judge-error alert threshold.",
                [
                    query(
                        f"judge_model:ragpulse_judge_requests_failed:ratio_rate10m{{{JUDGE_MODEL}}}",
                        "{{judge}} {{model}}",
                    )
                ],
                JUDGE_ERROR_SHARE,
                below_is_bad=False,
            )
        )
        .with_panel(
            time_series(
                "Judge latency",
                "Latency of one judge call (all judges).",
                latency_quantiles("ragpulse_judge_latency_seconds"),
                unit="s",
                width=24,
            )
        )
        .with_panel(canary_agreement_panel())
        .with_panel(judge_human_agreement_panel())
        .build()
    )


def canary_agreement_panel() -> timeseries.Panel:
    """The judge canary: a drop means the judge changed, so quality panels moved for the judge's reasons."""
    return share_panel(
        "Judge canary agreement",
        "Share of the frozen golden set's verdicts the judge repeats, per metric, judge and model "
        "(lowest replica; docs/judge-canary.md). Below the dashed line the judge-drift alert fires: "
        "scores moved because the judge changed, not the app.",
        [
            query(
                f"min by (metric, judge, model) (ragpulse_judge_canary_agreement_ratio{{{JUDGE_MODEL}}})",
                "{{metric}} {{judge}} {{model}}",
            )
        ],
        CANARY_AGREEMENT,
        below_is_bad=True,
        width=24,
    )


def judge_human_agreement_panel() -> timeseries.Panel:
    """Users' feedback against the judge: where they part, the threshold (or the judge) needs calibrating."""
    return time_series(
        "Judge-human agreement",
        "Share of users' thumbs the judge agreed with over a day, per metric (docs/feedback.md), and the "
        "judge's mean score of the answers users liked and disliked: a threshold between the two separates "
        "them. No line: no feedback matched to an evaluation that day.",
        [
            query("metric:ragpulse_judge_human_agreement:ratio1d", "agreement {{metric}}"),
            query(
                "sum by (metric, human) (increase(ragpulse_feedback_judge_score_sum[1d]))"
                " / (sum by (metric, human) (increase(ragpulse_feedback_judge_score_count[1d])) > 0)",
                "judge score, {{human}} feedback, {{metric}}",
                ref_id="B",
            ),
        ],
        unit="percentunit",
        max_value=1,
        width=24,
    )
