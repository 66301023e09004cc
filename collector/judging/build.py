"""The record evaluator the settings ask for: offline (default), an LLM judge, or the cascade.

The LLM judge is built here with its Prometheus hook (one count per HTTP request) and the
circuit breaker fed by the same hook.
"""

from __future__ import annotations

import time

import openai

from collector.judging.breaker import CircuitBreaker
from collector.judging.config import JudgeConfig, MetricsConfig
from collector.judging.evaluator import RecordEvaluator
from collector.judging.outbound import Outbound
from collector.judging.scorers import CaseScorer, JudgeOnLoop, OfflineJudgePool
from collector.metrics import JUDGE_COST, JUDGE_LATENCY, JUDGE_REQUESTS, JUDGE_TOKENS
from collector.review.fit import FittedThresholds
from evaluators import CallRecord, Judge, OpenAIJudge, Price
from evaluators.metrics.custom import CustomMetrics

_CALL_OUTCOMES = {"ok": "ok", "cached": "ok", "rate_limited": "rate_limited", "timeout": "timeout"}


def count_judge_call(call: CallRecord) -> None:
    """The `on_call` hook of OpenAIJudge: one Prometheus count per HTTP request."""
    outcome = _CALL_OUTCOMES.get(call.outcome, "invalid" if call.outcome == "invalid_output" else "error")
    JUDGE_REQUESTS.labels(call.judge, call.model, outcome).inc()
    if call.outcome != "cached":
        JUDGE_LATENCY.observe(call.latency_s)
    JUDGE_TOKENS.labels(call.judge, call.model, "prompt").inc(call.prompt_tokens)
    JUDGE_TOKENS.labels(call.judge, call.model, "completion").inc(call.completion_tokens)
    JUDGE_COST.labels(call.judge, call.model).inc(call.cost_usd)


def build_llm_judge(config: JudgeConfig, breaker: CircuitBreaker | None = None) -> OpenAIJudge:
    def on_call(call: CallRecord) -> None:
        count_judge_call(call)
        # A 429 is the provider pacing us, not failing: the judge waits its Retry-After and the
        # breaker stays closed (an open breaker would drop records a slower pace would have scored).
        if breaker is not None and call.outcome not in ("cached", "rate_limited"):
            breaker.record(call.outcome == "ok", time.monotonic())

    client = openai.AsyncOpenAI(
        base_url=config.base_url, api_key=config.resolved_api_key() or "unset", max_retries=0
    )
    prices = {model: Price(p, c) for model, (p, c) in config.prices_per_million.items()} or None
    return OpenAIJudge(
        config.model,
        client=client,
        timeout_s=config.timeout_s,
        max_retries=config.max_retries,
        prices=prices,
        on_call=on_call,
    )


def build_offline_judge() -> Judge:
    """The offline judge in this process, its embedding model loaded: ready means ready to judge."""
    from evaluators.offline import OfflineJudge

    judge = OfflineJudge()
    judge.embedder.embed(["warm-up"])
    return judge


def build_offline_scorer(
    config: JudgeConfig, metrics: MetricsConfig, workers: int, custom: CustomMetrics | None = None
) -> CaseScorer:
    processes = config.offline_process_count(workers)
    if processes == 0:
        return JudgeOnLoop(build_offline_judge(), metrics.options, custom)
    return OfflineJudgePool(processes, metrics.options, custom)


def build_evaluator(
    config: JudgeConfig,
    metrics: MetricsConfig,
    workers: int,
    custom: CustomMetrics | None = None,
    thresholds: FittedThresholds | None = None,
) -> RecordEvaluator:
    """`workers`: records evaluated concurrently (`evaluation.workers`), which sizes the offline pool;
    `custom`: the configured custom criteria (`custom_metrics:`), scored like built-in metrics;
    `thresholds`: pass thresholds refitted on reviewers' corrections (`collector/review/fit.py`)."""
    breaker = CircuitBreaker()
    if config.base_url is None:
        return RecordEvaluator(build_offline_scorer(config, metrics, workers, custom), thresholds=thresholds)
    llm = Outbound(JudgeOnLoop(build_llm_judge(config, breaker), metrics.options, custom), config.outbound)
    if config.cascade:
        offline = build_offline_scorer(config, metrics, workers, custom)
        return RecordEvaluator(offline, llm, config.cascade_band, breaker, thresholds)
    return RecordEvaluator(llm, breaker=breaker, thresholds=thresholds)
