"""The evaluate processor: RagRecord -> evaluators test case -> judge -> `Evaluation`s.

It owns what sits between the pipeline and the judge: choosing the judge (offline by default, an
OpenAI-compatible endpoint when configured, or the cascade of both), counting every judge request
in Prometheus, and a circuit breaker that stops calling a failing judge for a while.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import openai

from collector.config import JudgeConfig, Settings
from collector.exporters.kafka_results import KafkaResultsConfig, KafkaResultsExporter, recent_results
from collector.exporters.otel_spans import OtelExportConfig, OtelSpanExporter
from collector.exporters.prometheus import PrometheusExporter
from collector.metrics import (
    CASCADE,
    CIRCUIT_OPEN,
    DROPPED,
    JUDGE_COST,
    JUDGE_LATENCY,
    JUDGE_REQUESTS,
    JUDGE_TOKENS,
    LabelPolicy,
)
from collector.pipeline import EvaluationConfig, Spend
from collector.records import RagRecord
from collector.results import Evaluation, Outcome
from collector.sampling import Sampler, SamplingConfig
from evaluators import (
    CallRecord,
    CaseResult,
    Judge,
    Metric,
    MetricResult,
    OpenAIJudge,
    Price,
    a_evaluate_case,
)
from evaluators import create_metric as create_evaluator_metric

logger = logging.getLogger(__name__)

_CALL_OUTCOMES = {"ok": "ok", "cached": "ok", "rate_limited": "rate_limited", "timeout": "timeout"}
_CASCADE_METRICS = frozenset({"faithfulness", "hallucination"})


class CircuitBreaker:
    """Opens after `failures` consecutive failed judge requests; half-opens after `cooldown_s`."""

    def __init__(self, failures: int = 5, cooldown_s: float = 30.0) -> None:
        self.failures, self.cooldown_s = failures, cooldown_s
        self._consecutive = 0
        self._opened_at: float | None = None

    @property
    def is_open(self) -> bool:
        return self._opened_at is not None

    def allow(self, now: float) -> bool:
        if self._opened_at is None:
            return True
        if now - self._opened_at >= self.cooldown_s:  # half-open: let the next record probe the judge
            self._opened_at = None
            self._consecutive = self.failures - 1
            CIRCUIT_OPEN.set(0)
            return True
        return False

    def record(self, ok: bool, now: float) -> None:
        self._consecutive = 0 if ok else self._consecutive + 1
        if self._consecutive >= self.failures and self._opened_at is None:
            self._opened_at = now
            CIRCUIT_OPEN.set(1)
            logger.warning(
                "judge circuit breaker open for %.0fs after %d failures", self.cooldown_s, self.failures
            )


def count_judge_call(call: CallRecord) -> None:
    """The `on_call` hook of OpenAIJudge: one Prometheus count per HTTP request."""
    outcome = _CALL_OUTCOMES.get(call.outcome, "invalid" if call.outcome == "invalid_output" else "error")
    JUDGE_REQUESTS.labels(call.judge, call.model, outcome).inc()
    if call.outcome != "cached":
        JUDGE_LATENCY.observe(call.latency_s)
    JUDGE_TOKENS.labels(call.judge, call.model, "prompt").inc(call.prompt_tokens)
    JUDGE_TOKENS.labels(call.judge, call.model, "completion").inc(call.completion_tokens)
    JUDGE_COST.inc(call.cost_usd)


def build_llm_judge(config: JudgeConfig, breaker: CircuitBreaker | None = None) -> OpenAIJudge:
    def on_call(call: CallRecord) -> None:
        count_judge_call(call)
        if breaker is not None and call.outcome != "cached":
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
    from evaluators.offline import OfflineJudge

    judge = OfflineJudge()
    judge.embedder.embed(["warm-up"])  # load the embedding model now: ready means ready to judge
    return judge


class RecordEvaluator:
    def __init__(
        self,
        judge: Judge,
        metric_options: dict[str, dict[str, object]] | None = None,
        escalate_to: Judge | None = None,
        band: tuple[float, float] = (0.25, 0.75),
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.judge, self.escalate_to, self.band, self.breaker = judge, escalate_to, band, breaker
        self._options = metric_options or {}
        self._metrics: dict[str, Metric] = {}

    @property
    def ready(self) -> bool:
        """The judge is loaded (offline) or not known to be failing (its circuit is closed)."""
        return self.breaker is None or not self.breaker.is_open

    def metric(self, name: str) -> Metric:
        if name not in self._metrics:
            self._metrics[name] = create_evaluator_metric(name, **self._options.get(name, {}))
        return self._metrics[name]

    async def evaluate(self, record: RagRecord, metrics: Sequence[str]) -> tuple[list[Evaluation], Spend]:
        llm_allowed = self.breaker is None or self.breaker.allow(time.monotonic())
        if not llm_allowed and self.escalate_to is None:  # the only judge is failing: skip, counted
            DROPPED.labels("circuit_open").inc(len(metrics))
            return [], Spend()
        case = record.to_case()
        first = await a_evaluate_case(
            case, [self.metric(m) for m in metrics], self.judge, case_id=record.trace_id
        )
        results = {r.name: (r, self.judge) for r in first.results}
        spend = _spend(first)
        if self.escalate_to is not None:
            doubtful = [name for name, (r, _) in results.items() if self._doubtful(r)]
            CASCADE.labels("offline_only").inc(
                sum(n in _CASCADE_METRICS and n not in doubtful for n in results)
            )
            if doubtful and not llm_allowed:  # keep the offline verdicts; the escalation is skipped, counted
                DROPPED.labels("circuit_open").inc(len(doubtful))
            elif doubtful:
                CASCADE.labels("escalated").inc(len(doubtful))
                second = await a_evaluate_case(case, [self.metric(m) for m in doubtful], self.escalate_to)
                results.update({r.name: (r, self.escalate_to) for r in second.results})
                extra = _spend(second)
                spend = Spend(spend.tokens + extra.tokens, spend.usd + extra.usd)
        return [_evaluation(result, judge) for result, judge in results.values()], spend

    def _doubtful(self, result: MetricResult) -> bool:
        if result.name not in _CASCADE_METRICS:
            return False
        if result.score is None:
            return result.outcome == "error"
        low, high = self.band
        return low <= result.score <= high


def _spend(result: CaseResult) -> Spend:
    return Spend(result.usage.prompt_tokens + result.usage.completion_tokens, result.usage.cost_usd)


def _evaluation(result: MetricResult, judge: Judge) -> Evaluation:
    return Evaluation(
        metric=result.name,
        outcome=Outcome(result.outcome.value),
        score=result.score,
        reason=result.reason,
        threshold=result.threshold,
        lower_is_better=result.lower_is_better,
        judge=judge.info.judge,
        judge_model=judge.info.model,
        duration_s=result.duration_s,
    )


def build_evaluation_stages(
    settings: Settings, services: LabelPolicy, routes: LabelPolicy
) -> dict[str, object]:
    """The sampler, the record evaluator and the exporters, as `Pipeline` keyword arguments."""
    judge_config = settings.judge
    breaker = CircuitBreaker()
    if judge_config.base_url is None:
        evaluator = RecordEvaluator(build_offline_judge(), settings.metrics.options)
    elif judge_config.cascade:
        evaluator = RecordEvaluator(
            build_offline_judge(),
            settings.metrics.options,
            build_llm_judge(judge_config, breaker),
            judge_config.cascade_band,
            breaker,
        )
    else:
        evaluator = RecordEvaluator(
            build_llm_judge(judge_config, breaker), settings.metrics.options, breaker=breaker
        )
    exporters: list[object] = [PrometheusExporter(services, routes)]
    if settings.otel_export.endpoint:
        exporters.append(OtelSpanExporter(settings.otel_export))
    already_evaluated: list[tuple[str, str]] = []
    if settings.results.bootstrap_servers:
        exporters.append(KafkaResultsExporter(settings.results))
        already_evaluated = recent_results(settings.results, settings.evaluation.dedup_window_s)
        logger.info("duplicate filter seeded with %d recent results", len(already_evaluated))
    return {
        "sampler": Sampler(settings.sampling),
        "evaluator": evaluator,
        "exporters": exporters,
        "config": settings.evaluation,
        "already_evaluated": already_evaluated,
    }


__all__ = [
    "EvaluationConfig",
    "KafkaResultsConfig",
    "OtelExportConfig",
    "RecordEvaluator",
    "SamplingConfig",
    "build_evaluation_stages",
]
