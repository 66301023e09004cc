"""What `ragpulse check-config` says before the settings dump: which judge and source will run, and why.

A first-time user reads `"judge": {"base_url": null, ...}` and cannot tell that the offline judge is
the one that runs; these lines say it in words, with the setting that changes each choice. URLs are
shown without credentials.
"""

from __future__ import annotations

import os
import re
from typing import Any

from collector.config import Settings
from evaluators.metrics.registry import judged_offline
from evaluators.redaction import without_credentials

_SECRET_KEY = re.compile(r"(?i)(password|secret|token|api_key|credential)")


def masked(settings: Settings) -> dict[str, Any]:
    """The effective settings as JSON data with every secret masked: SecretStr fields, secret-looking keys
    in the pass-through client options (e.g. `sasl_plain_password`), and credentials in URLs."""
    return _mask(settings.model_dump(mode="json"))


def _mask(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _mask(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, key) for v in value]
    if isinstance(value, str) and value and _SECRET_KEY.search(key):
        return "**********"
    if isinstance(value, str) and "://" in value:
        return without_credentials(value)
    return value


def judge_line(settings: Settings) -> str:
    judge = settings.judge
    if judge.base_url is None:
        return (
            "offline (no judge.base_url is set; an LLM judge needs --judge-base-url or "
            "RAGPULSE_JUDGE__BASE_URL, and a key in RAGPULSE_JUDGE__API_KEY, OPENAI_API_KEY or "
            "judge.api_key_file)"
        )
    if judge.api_key is not None:
        key = "key from judge.api_key / RAGPULSE_JUDGE__API_KEY"
    elif judge.api_key_file is not None:
        found = "present" if judge.api_key_file.is_file() else "MISSING"
        key = f"key from judge.api_key_file {judge.api_key_file} ({found})"
    elif os.environ.get("OPENAI_API_KEY"):
        key = "key from OPENAI_API_KEY"
    else:
        key = "no key: set RAGPULSE_JUDGE__API_KEY, OPENAI_API_KEY or judge.api_key_file (unless local)"
    mode = (
        "cascade: offline first, the LLM when an offline verdict's probability is in "
        f"{list(judge.cascade_band)}"
        if judge.cascade
        else "every evaluation"
    )
    return f"OpenAI-compatible {judge.model} at {without_credentials(judge.base_url)} ({mode}; {key})"


def summary_lines(settings: Settings) -> list[str]:
    kafka, sampling = settings.kafka, settings.sampling
    if kafka.bootstrap_servers:
        logs = f" and {kafka.logs_topic}" if kafka.logs_topic else ""
        source = (
            f"Kafka {kafka.bootstrap_servers}, topic {kafka.topic}{logs}, group {kafka.group_id} "
            f"(dead letters to {kafka.dlq_topic})"
        )
    else:
        otlp = settings.otlp
        grpc = "off" if otlp.grpc_port < 0 else f"{otlp.host}:{otlp.grpc_port}"
        source = (
            f"embedded OTLP receivers: gRPC {grpc}, HTTP {otlp.host}:{otlp.port} "
            "(no kafka.bootstrap_servers is set)"
        )
    spans = (
        f"evaluation spans to {without_credentials(settings.otel_export.endpoint)}"
        if settings.otel_export.endpoint
        else "no evaluation spans (otel_export.endpoint unset)"
    )
    if settings.otel_export.endpoint and settings.otel_export.log_events and settings.otel_export.logs_url:
        spans += f" and log events to {without_credentials(settings.otel_export.logs_url)}"
    results = (
        f"results topic {settings.results.topic}"
        if settings.results.bootstrap_servers
        else "no results topic"
    )
    rate = "every trace" if sampling.rate >= 1.0 else f"{sampling.rate:.0%} of traces"
    custom = [custom_line(settings)] if settings.custom_metrics else []
    custom += needs_llm_line(settings)
    trust = [trust_line(settings)]
    return [
        f"judge:     {judge_line(settings)}",
        f"source:    {source}",
        f"metrics:   http://{settings.metrics_host}:{settings.metrics_port}/metrics (also /healthz, /readyz)",
        f"sampling:  {rate}; metrics {', '.join(sampling.metrics)}"
        f" (+ {', '.join(sampling.reference_metrics)} when a trace carries an expected output)",
        *custom,
        f"exporters: Prometheus; {spans}; {results}"
        + (
            f"; Phoenix annotations to {without_credentials(settings.phoenix.endpoint)}"
            if settings.phoenix.endpoint
            else ""
        ),
        f"page:      {page_line(settings)}",
        *trust,
        f"assembly:  a trace closes {settings.assembly.quiet_period_s:g} s after its root span ended",
    ]


def custom_line(settings: Settings) -> str:
    used = {*settings.sampling.metrics, *settings.sampling.reference_metrics}
    named = ", ".join(
        f"{name} ({spec.kind}{'' if name in used else ', not in sampling.metrics'})"
        for name, spec in settings.custom_metrics.items()
    )
    if settings.judge.base_url is None:
        return f"custom:    {named}; unmeasured under the offline judge (set judge.base_url)"
    return f"custom:    {named}"


def needs_llm_line(settings: Settings) -> list[str]:
    """Built-in metrics in sampling that the offline judge can only call unmeasured (criteria,
    conversations, pairwise): said at start, not discovered on the dashboard."""
    sampling = settings.sampling
    names = [
        name
        for name in dict.fromkeys((*sampling.metrics, *sampling.reference_metrics))
        if name not in settings.custom_metrics and not judged_offline(name)
    ]
    if settings.judge.base_url is not None or not names:
        return []
    return [f"llm only:  {', '.join(names)}; unmeasured under the offline judge (set judge.base_url)"]


def trust_line(settings: Settings) -> str:
    """Human feedback and the judge canary: what tells a judge problem from an app problem."""
    feedback = settings.feedback
    if not feedback.enabled:
        heard = "human feedback off"
    elif feedback.kafka_topic:
        heard = f"human feedback from spans and topic {feedback.kafka_topic}"
    else:
        heard = "human feedback from spans (ragpulse.feedback, OpenInference annotations)"
    canary = settings.canary
    if canary.cases is None:
        return f"trust:     {heard}; no judge canary (canary.cases unset)"
    return f"trust:     {heard}; judge canary {canary.cases.name} every {canary.interval_s:g} s"


def page_line(settings: Settings) -> str:
    page = settings.page
    if not page.enabled:
        return "off"
    url = f"http://{settings.metrics_host}:{settings.metrics_port}/"
    store = str(page.store_path) if page.store_path else "in memory"
    access = "bearer token" if page.token or page.token_file else "no token"
    texts = "; texts hidden" if settings.hide_texts else ""
    return f"{url} ({access}; store {store}, {page.retention_hours:g} h){texts}"
