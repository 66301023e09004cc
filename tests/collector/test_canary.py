"""The judge canary: a golden set frozen with the real `ragpulse eval --json`, re-judged by a real
`ragpulse run` through the same OpenAI-compatible judge (the scripted server, over real HTTP).

Same judge: agreement 1.0. A judge that answers differently (a "new judge model"): agreement drops for the
metric it changed, and only that one. The judge down: failed runs are counted, the sidecar keeps serving.
A change of judge model is a restart (a fresh process here); a model changed behind the same name is seen
by the next run, because the canary never answers from the judge's reply cache.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from collector.feedback.canary import CanaryConfig, build_canary
from collector.judging.build import build_evaluator
from collector.judging.config import JudgeConfig, MetricsConfig
from collector.metrics import REGISTRY
from testkit.collector_runner import wait_for
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer
from testkit.process import RagpulseProcess, http_status
from testkit.scrape import scrape

METRICS = ("faithfulness", "answer_relevancy")
GOLDEN = [
    ("What is the capital of France?", "Paris is the capital of France.", "Paris is the capital of France."),
    ("Who wrote Hamlet?", "Shakespeare wrote Hamlet.", "Hamlet is a play by William Shakespeare."),
    ("How tall is Everest?", "Everest is 8849 metres tall.", "Mount Everest is 8849 metres high."),
    ("What do bees make?", "Bees make honey.", "Honey bees produce honey from nectar."),
    ("Where is Kyoto?", "Kyoto is in Japan.", "Kyoto is a city in Japan."),
]
# The "new judge model": it no longer finds two of the five answers supported (faithfulness 3/5 agree).
NEW_JUDGE = JudgeScript(task_verdicts={("supported", "Paris"): "no", ("supported", "Shakespeare"): "no"})


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The golden set and its verdicts, frozen the way the docs say: `ragpulse eval --json`."""
    folder = tmp_path_factory.mktemp("golden")
    cases = folder / "golden.jsonl"
    cases.write_text(
        "".join(json.dumps({"question": q, "answer": a, "contexts": [c]}) + "\n" for q, a, c in GOLDEN)
    )
    baseline = folder / "baseline.json"
    with ScriptedOpenAIServer() as judge:
        result = run_cli(
            "eval", str(cases), "--judge", "openai", "--base-url", judge.base_url, "--model", "scripted",
            "--metrics", ",".join(METRICS), "--json", str(baseline), "--no-progress",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return cases, baseline


def canary_config(tmp_path: Path, golden: tuple[Path, Path], judge_url: str, model: str) -> Path:
    cases, baseline = golden
    config = tmp_path / f"ragpulse-{model}.yaml"
    config.write_text(
        f"judge: {{base_url: '{judge_url}', model: {model}, max_retries: 0, timeout_s: 2}}\n"
        f"canary: {{cases: '{cases}', baseline: '{baseline}', interval_s: 0.3}}\n"
    )
    return config


def runs(port: int, outcome: str) -> float:
    return scrape(port).value("ragpulse_judge_canary_runs_total", outcome=outcome)


def test_the_same_judge_agrees_with_its_stored_verdicts(golden: tuple[Path, Path], tmp_path: Path) -> None:
    with (
        ScriptedOpenAIServer() as judge,
        RagpulseProcess(
            "--config", str(canary_config(tmp_path, golden, judge.base_url, "scripted")), "--quiet"
        ) as ragpulse,
    ):
        wait_for(lambda: runs(ragpulse.metrics_port, "ok") >= 1, 60, "a first canary run")
        metrics = scrape(ragpulse.metrics_port)
    for metric in METRICS:
        labels = {"metric": metric, "judge": "openai", "model": "scripted"}
        assert metrics.value("ragpulse_judge_canary_agreement_ratio", **labels) == 1.0
        assert metrics.value("ragpulse_judge_canary_score_drift", **labels) == pytest.approx(0.0)
    assert metrics.value("ragpulse_judge_canary_last_run_timestamp_seconds") > 0
    # Its calls are the sidecar's judge calls: counted in the judge's tokens like live evaluations.
    assert metrics.value("ragpulse_judge_tokens_total", judge="openai", model="scripted") > 0
    assert ragpulse.stop() == 0


def test_a_new_judge_model_shows_as_drift_of_the_metric_it_changed(
    golden: tuple[Path, Path], tmp_path: Path
) -> None:
    config = canary_config(tmp_path, golden, "JUDGE", "scripted-v2")
    with ScriptedOpenAIServer(NEW_JUDGE) as judge:
        config.write_text(config.read_text().replace("JUDGE", judge.base_url))
        with RagpulseProcess("--config", str(config), "--quiet") as ragpulse:
            wait_for(lambda: runs(ragpulse.metrics_port, "ok") >= 1, 60, "a first canary run")
            metrics = scrape(ragpulse.metrics_port)
    labels = {"judge": "openai", "model": "scripted-v2"}
    agreement, drift = "ragpulse_judge_canary_agreement_ratio", "ragpulse_judge_canary_score_drift"
    assert metrics.value(agreement, metric="faithfulness", **labels) == pytest.approx(3 / 5)  # < 0.8
    assert metrics.value(drift, metric="faithfulness", **labels) == pytest.approx(2 / 5)  # two 1.0 -> 0.0
    assert metrics.value(agreement, metric="answer_relevancy", **labels) == 1.0


def test_a_judge_outage_counts_failed_runs_and_never_stops_the_sidecar(
    golden: tuple[Path, Path], tmp_path: Path
) -> None:
    with ScriptedOpenAIServer() as judge:
        judge.failing = "500"
        config = canary_config(tmp_path, golden, judge.base_url, "scripted")
        with RagpulseProcess("--config", str(config), "--quiet") as ragpulse:
            port = ragpulse.metrics_port
            wait_for(lambda: runs(port, "error") >= 2, 60, "failed canary runs counted")
            metrics = scrape(port)
            assert http_status(f"{ragpulse.metrics_url}/healthz") == 200
        assert ragpulse.stop() == 0
    # An outage is not drift: no agreement is exported from runs that judged nothing.
    assert metrics.value("ragpulse_judge_canary_runs_total", outcome="ok") == 0
    assert not [s for s in metrics.samples if s.name == "ragpulse_judge_canary_agreement_ratio"]
    assert "Traceback" not in ragpulse.output() and "judge canary run failed" in ragpulse.output()


def test_judge_errors_on_some_cases_are_left_out_not_counted_as_disagreement(
    golden: tuple[Path, Path],
) -> None:
    cases, baseline = golden
    config = CanaryConfig(cases=cases, baseline=baseline)
    judge_config = {"model": "scripted", "max_retries": 0, "timeout_s": 2}
    with ScriptedOpenAIServer() as judge:
        evaluator = build_evaluator(JudgeConfig(base_url=judge.base_url, **judge_config), MetricsConfig(), 1)
        canary = build_canary(config, evaluator)
        assert canary is not None
        judge.fail_next("500", "500", "500")  # a few calls of this run fail; the rest are judged
        agreement = asyncio.run(canary.run_once())
    assert agreement is not None and all(share == 1.0 for share in agreement.values())

    with ScriptedOpenAIServer() as down:
        down.failing = "500"
        evaluator = build_evaluator(JudgeConfig(base_url=down.base_url, **judge_config), MetricsConfig(), 1)
        canary = build_canary(config, evaluator)
        assert canary is not None
        failed_before = failed_runs()
        assert asyncio.run(canary.run_once()) is None  # nothing judged: a failed run, no exception
        assert failed_runs() == failed_before + 1


def test_a_model_changed_behind_the_same_name_is_seen_by_the_next_run(golden: tuple[Path, Path]) -> None:
    """The judge's reply cache would answer the second run from the first's replies: the canary asks anew."""
    cases, baseline = golden
    with ScriptedOpenAIServer() as judge:
        config = JudgeConfig(base_url=judge.base_url, model="scripted", max_retries=0, timeout_s=2)
        canary = build_canary(
            CanaryConfig(cases=cases, baseline=baseline), build_evaluator(config, MetricsConfig(), 1)
        )
        assert canary is not None

        async def two_runs() -> tuple[dict[str, float] | None, dict[str, float] | None]:
            first = await canary.run_once()
            judge.script = NEW_JUDGE  # the provider swaps the model; the name stays "scripted"
            return first, await canary.run_once()

        first, second = asyncio.run(two_runs())
    assert first is not None and first["faithfulness"] == 1.0
    assert second is not None and second["faithfulness"] == pytest.approx(3 / 5)


def failed_runs() -> float:
    return REGISTRY.get_sample_value("ragpulse_judge_canary_runs_total", {"outcome": "error"}) or 0.0


@pytest.mark.parametrize(
    ("canary", "message"),
    [
        ("{cases: missing.jsonl, baseline: BASELINE}", "missing.jsonl: no such file"),
        ("{cases: CASES}", "cases is set but baseline is not"),
        ("{baseline: BASELINE}", "baseline is set but cases is not"),
        ("{cases: OTHER, baseline: BASELINE}", "is not a report of these cases: 1 case(s) without stored"),
        ("{cases: CASES, baseline: CASES}", "not a `ragpulse eval --json` report"),
        ("{cases: CASES, baseline: BASELINE, metrics: [contextual_recall]}", "have no stored verdicts"),
        ("{cases: CASES, baseline: BASELINE, interval_s: 0}", "canary.interval_s"),
    ],
)
def test_a_golden_set_that_cannot_work_is_one_line_at_check_config(
    golden: tuple[Path, Path], tmp_path: Path, canary: str, message: str
) -> None:
    cases, baseline = golden
    other = tmp_path / "other.jsonl"
    other.write_text(
        cases.read_text() + json.dumps({"question": "q?", "answer": "a.", "contexts": ["c."]}) + "\n"
    )
    section = canary.replace("BASELINE", f"'{baseline}'").replace("CASES", f"'{cases}'")
    config = tmp_path / "ragpulse.yaml"
    config.write_text(f"canary: {section.replace('OTHER', repr(str(other)))}\n")
    result = run_cli("check-config", "--config", str(config))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("ragpulse: configuration error: canary")
    assert message in result.stderr


def test_a_matching_golden_set_passes_check_config(golden: tuple[Path, Path], tmp_path: Path) -> None:
    cases, baseline = golden
    config = tmp_path / "ragpulse.yaml"
    config.write_text(f"canary: {{cases: '{cases}', baseline: '{baseline}'}}\n")
    result = run_cli("check-config", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.split("(secrets masked):\n", 1)[1])["canary"]["interval_s"] == 3600
