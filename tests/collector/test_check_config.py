"""`ragpulse check-config` as a user runs it: says which judge and source will run, and leaks no secret."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def check_config(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_") and k != "OPENAI_API_KEY"}
    return subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", "check-config", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **env},
    )


def test_defaults_say_the_offline_judge_and_the_embedded_receivers_run() -> None:
    result = check_config()
    assert result.returncode == 0, result.stderr
    head = result.stdout.split("effective settings")[0]
    assert "judge:     offline (no judge.base_url is set" in head and "--judge-base-url" in head
    assert "gRPC 127.0.0.1:4317, HTTP 127.0.0.1:4318" in head
    assert "http://127.0.0.1:9464/metrics" in head
    assert "every trace; metrics faithfulness" in head


def test_an_llm_judge_and_kafka_are_described_and_no_secret_is_printed() -> None:
    result = check_config(
        "--kafka-bootstrap",
        "kafka:9092",
        RAGPULSE_JUDGE__BASE_URL="https://judge-user:url-secret@llm.example/v1",
        RAGPULSE_JUDGE__API_KEY="sk-not-for-printing",
        RAGPULSE_PHOENIX__ENDPOINT="http://phoenix-user:phoenix-secret@phoenix:6006",
        RAGPULSE_KAFKA__OPTIONS=json.dumps(
            {"sasl_plain_password": "sasl-secret", "security_protocol": "SASL_SSL"}
        ),
    )
    assert result.returncode == 0, result.stderr
    for secret in ("url-secret", "judge-user", "sk-not-for-printing", "sasl-secret", "phoenix-secret"):
        assert secret not in result.stdout + result.stderr
    assert "OpenAI-compatible gpt-4o-mini at https://llm.example/v1" in result.stdout
    assert "Kafka kafka:9092, topic otlp_spans and otlp_logs" in result.stdout
    assert "Phoenix annotations to http://phoenix:6006" in result.stdout
    settings = json.loads(result.stdout.split("effective settings (secrets masked):\n", 1)[1])
    assert settings["kafka"]["options"]["security_protocol"] == "SASL_SSL"
    assert settings["judge"]["api_key"] == settings["kafka"]["options"]["sasl_plain_password"] == "**********"


def test_an_invalid_setting_is_one_line_that_never_repeats_the_value(tmp_path) -> None:
    """A secret given the wrong type (a numeric token as a header) is named, not printed."""
    config = tmp_path / "ragpulse.yaml"
    config.write_text(
        "otel_export:\n  endpoint: http://tempo:4318/v1/traces\n  headers: {authorization: 987654321}\n"
        "kafka:\n  max_record_bytes: lots\n"
    )
    result = check_config("--config", str(config))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "987654321" not in result.stderr and "lots" not in result.stderr
    assert "otel_export.headers.authorization: Input should be a valid string" in result.stderr
    assert "kafka.max_record_bytes: Input should be a valid integer" in result.stderr


def test_every_configured_endpoint_refuses_headers_http_cannot_send(tmp_path) -> None:
    """One check for forwarding, evaluation spans and Phoenix: named, masked, at start."""
    config = tmp_path / "ragpulse.yaml"
    bad = 'authorization: "Bearer tok\\u00e9n-secret"'
    config.write_text(
        f"otlp:\n  forward:\n    endpoint: http://collector:4318\n    headers: {{{bad}}}\n"
        f"otel_export:\n  endpoint: http://tempo:4318/v1/traces\n  headers: {{{bad}}}\n"
        f"phoenix:\n  endpoint: http://phoenix:6006\n  headers: {{{bad}}}\n"
    )
    result = check_config("--config", str(config))
    assert result.returncode == 2
    assert "secret" not in result.stdout + result.stderr
    for where in (
        "otlp.forward.headers.authorization",
        "otel_export.headers.authorization",
        "phoenix.headers",
    ):
        assert where in result.stderr, result.stderr


def test_metrics_only_an_llm_judge_can_score_are_named_under_the_offline_judge() -> None:
    metrics = '["faithfulness", "knowledge_retention", "helpfulness"]'
    offline = check_config(RAGPULSE_SAMPLING__METRICS=metrics)
    assert offline.returncode == 0, offline.stderr
    assert (
        "llm only:  knowledge_retention, helpfulness; unmeasured under the offline judge (set judge.base_url)"
        in offline.stdout
    )
    assert "llm only" not in check_config().stdout  # the defaults all run offline
    judged = check_config(
        RAGPULSE_SAMPLING__METRICS=metrics, RAGPULSE_JUDGE__BASE_URL="http://127.0.0.1:1/v1"
    )
    assert "llm only" not in judged.stdout
