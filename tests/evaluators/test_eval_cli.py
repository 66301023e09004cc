"""`ragpulse eval` as users expect: the judge it picks and says, exit codes, reasons, both libraries'
names, custom metrics, CSV with multi-line cells and the question in the HTML report."""

from __future__ import annotations

import base64
import csv
import json
import logging
import re
from pathlib import Path

import pytest
import yaml

from evaluators.cli import main
from evaluators.dataset import load_cases
from evaluators.judge_choice import JudgeChoiceError, choose_judge
from testkit.openai_server import ScriptedOpenAIServer
from testkit.process import free_port

ROWS = [
    {
        "id": "paris",
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France.",
        "contexts": ["Paris is the capital of France."],
        "ground_truth": "Paris is the capital of France.",
    },
    {
        "id": "hamlet",
        "question": "Who wrote <b>Hamlet</b>?",
        "answer": "William Shakespeare wrote <b>Hamlet</b>.",
        "contexts": ["Hamlet is a tragedy written by William Shakespeare."],
        "ground_truth": "William Shakespeare.",
    },
]


@pytest.fixture(autouse=True)
def no_judge_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's or CI's own OpenAI settings must not choose the judge in these tests."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n")
    return path


def test_choice_follows_the_configuration() -> None:
    assert choose_judge(environ={}).describe() == (
        "judge: offline (no --base-url, OPENAI_BASE_URL or OPENAI_API_KEY)"
    )
    local = choose_judge(base_url="http://127.0.0.1:8000/v1", environ={})
    assert local.describe() == "judge: openai gpt-4o-mini at http://127.0.0.1:8000/v1 (--base-url)"
    assert choose_judge(environ={"OPENAI_BASE_URL": "http://x/v1"}).why == "OPENAI_BASE_URL is set"
    keyed = choose_judge(api_key_env="MY_KEY", environ={"MY_KEY": "sk-1"})
    assert keyed.kind == "openai" and "https://api.openai.com/v1 (MY_KEY is set)" in keyed.describe()
    assert choose_judge("offline", environ={"OPENAI_API_KEY": "sk"}).kind == "offline"
    assert choose_judge("openai", base_url="http://127.0.0.1:1/v1", environ={}).kind == "openai"
    with pytest.raises(JudgeChoiceError, match=r"needs an API key in \$OPENAI_API_KEY"):
        choose_judge("openai", environ={})


def test_offline_by_default_and_says_so(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(dataset), "--metrics", "faithfulness", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "judge: offline (no --base-url, OPENAI_BASE_URL or OPENAI_API_KEY)" in err


def test_the_learned_offline_judge_on_request(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(dataset), "--metrics", "faithfulness", "--judge", "offline-learned", "--no-progress"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "judge: offline-learned (--judge offline-learned)" in captured.err
    assert "faithfulness" in captured.out


def test_forced_openai_without_a_key_fails_fast(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(dataset), "--judge", "openai", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err == "error: --judge openai needs an API key in $OPENAI_API_KEY (or --base-url for a local server)"
    )


def test_every_result_an_error_exits_2_with_the_reason(
    dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nothing_there = f"http://127.0.0.1:{free_port()}/v1"  # connection refused on every call
    code = main([str(dataset), "--metrics", "faithfulness", "--base-url", nothing_there, "--no-progress"])
    captured = capsys.readouterr()
    assert code == 2
    (line,) = [ln for ln in captured.err.splitlines() if "no result could be scored" in ln]
    assert "(2 error, 0 unmeasured); most common (2×): judge error:" in line
    assert "faithfulness error (2 of 2): judge error:" in captured.out  # the reason under the table


def test_credentials_in_the_judge_url_reach_no_output(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """`--base-url http://user:pass@...` against a gateway that answers 401 quoting the Basic auth it
    refused: not the first line, the table, the reasons, the JSON or HTML report nor a log line names
    user:pass or its base64."""
    caplog.set_level(logging.INFO)
    basic = base64.b64encode(b"user:pass").decode()
    json_out, html_out = tmp_path / "out.json", tmp_path / "out.html"
    with ScriptedOpenAIServer() as server:
        server.failing = "401-echo"
        url = server.base_url.replace("http://", "http://user:pass@")
        args = [str(dataset), "--metrics", "faithfulness", "--base-url", url, "--no-progress"]
        code = main([*args, "--json", str(json_out), "--html", str(html_out)])
        echoed = server.requests[0].reply
    captured = capsys.readouterr()
    assert code == 2 and f"Basic {basic}" in echoed  # every call refused, the header quoted back
    assert captured.err.startswith(f"judge: openai gpt-4o-mini at {server.base_url} (--base-url)")
    assert "HTTP 401" in captured.out and "Basic [redacted]" in json_out.read_text()
    outputs = [captured.out, captured.err, caplog.text, json_out.read_text(), html_out.read_text()]
    for output in outputs:
        assert "user:pass" not in output and basic not in output and "pass@" not in output


def test_unmeasured_reasons_under_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "no-truth.jsonl"
    path.write_text("\n".join(json.dumps({k: v for k, v in r.items() if k != "ground_truth"}) for r in ROWS))
    assert main([str(path), "--metrics", "faithfulness,contextual_recall", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert (
        "contextual_recall unmeasured (2 of 2): metric 'contextual_recall' needs the test-case field "
        "'expected_output', which is missing or empty"
    ) in out


def test_ragas_metric_names(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    metrics = "context_precision,context_recall"
    assert main([str(dataset), "--metrics", metrics, "--json", str(out), "--no-progress"]) == 0
    report = json.loads(out.read_text())
    assert [m["name"] for m in report["metrics"]] == ["contextual_precision", "contextual_recall"]
    assert all(m["mean"] is not None for m in report["metrics"])


def test_custom_metrics_from_a_config_file(
    openai_server: ScriptedOpenAIServer, dataset: Path, tmp_path: Path
) -> None:
    config = tmp_path / "ragpulse.yaml"  # a sidecar config: other sections are there too
    config.write_text(
        "judge:\n  model: m\n"
        "custom_metrics:\n  politeness:\n    kind: geval\n    criteria: Is the answer polite?\n"
    )
    out = tmp_path / "out.json"
    args = [str(dataset), "--custom-metrics", str(config), "--metrics", "politeness,faithfulness"]
    args += ["--base-url", openai_server.base_url, "--json", str(out), "--no-progress"]
    assert main(args) == 0
    politeness = json.loads(out.read_text())["metrics"][0]
    assert politeness["name"] == "politeness" and politeness["mean"] == pytest.approx(6 / 9)


def test_bad_custom_metrics_file_is_one_line(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("custom_metrics:\n  politeness: [\n")
    assert main([str(dataset), "--custom-metrics", str(config), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "invalid YAML" in err and "\n" not in err


def test_csv_cell_with_newlines_is_intact(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "answer", "contexts"])
        writer.writerow(["Q1?", "First paragraph.\n\nSecond paragraph.", '["one\\ntwo", "three"]'])
        writer.writerow(["Q2?", "A2.", "plain\r\npassage"])
    first, second = load_cases(path)
    assert first.actual_output == "First paragraph.\n\nSecond paragraph."
    assert first.retrieval_context == ["one\ntwo", "three"]
    assert second.input == "Q2?" and second.retrieval_context == ["plain\npassage"]
    assert (first.id, second.id) == ("row-2", "row-3")


def test_html_report_shows_question_and_answer_escaped(dataset: Path, tmp_path: Path) -> None:
    html_out = tmp_path / "report.html"
    assert main([str(dataset), "--metrics", "faithfulness", "--html", str(html_out), "--no-progress"]) == 0
    html = html_out.read_text()
    assert "case paris: What is the capital of France?" in html
    assert "Who wrote &lt;b&gt;Hamlet&lt;/b&gt;?" in html
    assert "William Shakespeare wrote &lt;b&gt;Hamlet&lt;/b&gt;." in html and "<b>Hamlet" not in html


def test_docs_workflow_is_valid_yaml() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "ci.md").read_text()
    (workflow,) = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    document = yaml.safe_load(workflow)
    steps = document["jobs"]["rag-quality"]["steps"]
    commands = " ".join(step.get("run", "") for step in steps)
    assert "ragpulse eval" in commands and "--ragpulse-judge offline" in commands


def test_the_sidecars_config_gives_its_thresholds_and_criteria(dataset: Path, tmp_path: Path) -> None:
    """`--config ragpulse.yaml`: a case exported from production scores under the sidecar's thresholds."""
    config = tmp_path / "ragpulse.yaml"
    config.write_text(
        "metrics:\n  options:\n    faithfulness: {threshold: 0.9}\n"
        "custom_metrics:\n  tone: {kind: aspect, definition: 'Is the answer polite?'}\n"
    )
    configured, overridden = tmp_path / "configured.json", tmp_path / "overridden.json"
    args = [str(dataset), "--metrics", "faithfulness,tone", "--config", str(config), "--no-progress"]
    assert main([*args, "--json", str(configured)]) == 0
    assert main([*args, "--threshold", "0.3", "--json", str(overridden)]) == 0

    def thresholds(report: Path) -> dict[str, float]:
        results = json.loads(report.read_text())["cases"][0]["results"]
        return {r["name"]: r["threshold"] for r in results}

    assert thresholds(configured) == {"faithfulness": 0.9, "tone": 0.5}
    assert thresholds(overridden) == {"faithfulness": 0.3, "tone": 0.3}
