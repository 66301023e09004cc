"""Custom criteria from the YAML config, scored online like built-in metrics; config mistakes fail at load.

A real `ragpulse run` reads a config with a G-Eval rubric and an aspect critique, receives the real
LlamaIndex + OpenInference capture over OTLP/HTTP, asks the judge (the scripted OpenAI-compatible
server, over real HTTP) and exports both custom scores under their own names.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from collector.config import load_settings
from collector.errors import ConfigError
from testkit.collector_runner import wait_for
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.scrape import scrape

CAPTURE = Path(__file__).parents[1] / "data" / "instrumentation" / "llamaindex-openinference"
JSON = "application/json"

CONFIG = """
custom_metrics:
  politeness:
    kind: geval
    criteria: Is the answer polite and free of blame towards the user?
    evaluation_params: [input, actual_output]
    threshold: 0.6
  cites_the_context:
    kind: aspect
    definition: Does the answer rely only on the retrieved passages?
    strictness: 1
sampling:
  metrics: [faithfulness, politeness, cites_the_context]
  reference_metrics: []
metrics:
  options:
    politeness: {threshold: 0.5}
"""


def check_config(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", "check-config", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_custom_criteria_from_yaml_are_scored_online_on_a_real_capture(tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(CONFIG)
    expected = json.loads((CAPTURE / "expected.json").read_text())
    with (
        ScriptedOpenAIServer(JudgeScript(rubric_score=8)) as judge,
        RagpulseProcess(
            "--config", str(config), "--quiet-period", "0.3", "--judge-base-url", judge.base_url
        ) as ragpulse,
    ):
        status, _ = post_traces(ragpulse.otlp_port, (CAPTURE / "traces.json").read_bytes(), JSON)
        assert status == 200

        def scored() -> bool:
            metrics = scrape(ragpulse.metrics_port)
            return all(
                metrics.value("ragpulse_evaluations_total", metric=name) >= len(expected)
                for name in ("faithfulness", "politeness", "cites_the_context")
            )

        wait_for(scored, 60, "the custom metrics scored")
        metrics = scrape(ragpulse.metrics_port)
        rubric_prompts = [r for r in judge.chat_requests if "polite" in json.dumps(r.body)]
    assert metrics.value("ragpulse_evaluations_total", metric="politeness", outcome="passed") == len(expected)
    assert metrics.mean_score("politeness") == pytest.approx((8 - 1) / 9)  # 8 on 1..10, normalised
    assert metrics.value("ragpulse_evaluations_total", metric="cites_the_context", outcome="passed") == len(
        expected
    )
    assert rubric_prompts, "the judge was never shown the custom criteria"


def test_custom_criteria_under_the_offline_judge_are_unmeasured_with_a_reason(tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(CONFIG)
    with RagpulseProcess("--config", str(config), "--quiet-period", "0.3") as ragpulse:
        post_traces(ragpulse.otlp_port, (CAPTURE / "traces.json").read_bytes(), JSON)
        metrics_port = ragpulse.metrics_port
        wait_for(
            lambda: scrape(metrics_port).value("ragpulse_evaluations_total", metric="politeness") >= 1,
            60,
            "politeness evaluated",
        )
        metrics = scrape(ragpulse.metrics_port)
    for name in ("politeness", "cites_the_context"):
        total = metrics.value("ragpulse_evaluations_total", metric=name)
        assert metrics.value("ragpulse_evaluations_total", metric=name, outcome="unmeasured") == total
    assert metrics.value("ragpulse_dropped_total", reason="internal_error") == 0


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("kafka:\n  topik: spans\n", "kafka.topik: unknown key"),
        ("sampling:\n  metrics: [faithfullness]\n", "'faithfullness' (did you mean 'faithfulness'?)"),
        ("sampling:\n  metric_rates: {politenes: 0.5}\n", "sampling.metric_rates: unknown metric"),
        ("metrics:\n  options:\n    faithfulness: {treshold: 0.7}\n", "unknown option 'treshold'"),
        ("sampling:\n  metrics: [faithfulness\nkafka: : x\n", "invalid YAML: line 3, column 6"),
        ("- a list\n", "the top level must be a mapping"),
        (
            "custom_metrics:\n  faithfulness: {kind: aspect, definition: x}\n",
            "'faithfulness' is a built-in metric",
        ),
        ("custom_metrics:\n  tone: {kind: geval}\n", "needs criteria or evaluation_steps"),
        ("custom_metrics:\n  tone: {kind: rubric, criteria: x}\n", "custom_metrics.tone"),
    ],
)
def test_config_mistakes_are_one_line_at_load(tmp_path: Path, yaml_text: str, message: str) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(yaml_text)
    result = check_config(config)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragpulse: configuration error: "), result.stderr
    assert message in lines[0]


def test_a_valid_custom_config_loads_and_aliases_are_accepted(tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(CONFIG)
    settings = load_settings(config)
    assert set(settings.custom_metrics) == {"politeness", "cites_the_context"}
    aliased = tmp_path / "aliases.yaml"
    aliased.write_text("sampling:\n  reference_metrics: [context_precision, context_recall]\n")
    assert load_settings(aliased).sampling.reference_metrics == ["context_precision", "context_recall"]
    broken = tmp_path / "broken.yaml"
    broken.write_text("otlp: [\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_settings(broken)
