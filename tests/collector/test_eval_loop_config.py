"""`ragpulse eval --config <the sidecar's config>` judges with the sidecar's judge, built by the code
`ragpulse run` builds it with (settings, RAGPULSE_* overrides, the outbound rewrite), and scores its
custom criteria; exported cases are compared with what production said of them.

The judge is the scripted OpenAI-compatible server over real HTTP; `ragpulse eval` runs in-process
through the `ragpulse` entry point (collector.commands.cli.main), which is what hands evaluators the config.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.commands.cli import main
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer

CASE = {
    "id": "trace-1:span-1",
    "input": "How tall is the Eiffel Tower? Mail me at jane.doe@example.com",
    "actual_output": "The tower is 512 metres tall.",
    "retrieval_context": ["The tower is 330 metres tall and was the tallest structure until 1930."],
    "metadata": {  # what `ragpulse export-cases` writes: production's results and its judge
        "metrics": {
            "faithfulness": {"score": 0.0, "outcome": "failed", "threshold": 0.7, "judge": "openai"},
            "politeness": {"score": 0.78, "outcome": "passed", "threshold": 0.6, "judge": "openai"},
        }
    },
}
CRITERIA = """
custom_metrics:
  politeness:
    kind: geval
    criteria: Is the answer polite and free of blame towards the user?
    evaluation_params: [input, actual_output]
    threshold: 0.6
metrics:
  options:
    faithfulness: {threshold: 0.7}
"""


@pytest.fixture
def judge() -> Iterator[ScriptedOpenAIServer]:
    script = JudgeScript(rubric_score=8, task_verdicts={("supported", "512 metres"): "no"})
    with ScriptedOpenAIServer(script) as server:
        yield server


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(CASE) + "\n")
    return path


def _eval(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    capsys.readouterr()
    code = main(["eval", *args, "--no-progress"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def test_the_configs_judge_scores_every_metric_production_scored(
    judge: ScriptedOpenAIServer, cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(f'judge: {{base_url: "{judge.base_url}", model: scripted}}\n' + CRITERIA)
    report = tmp_path / "report.json"
    code, out, err = _eval(capsys, str(cases), "--config", str(config), "--json", str(report))
    assert code == 0, out + "\n".join(err)
    assert err[0] == f"judge: openai scripted at {judge.base_url} ({config})"
    results = {r["name"]: r for r in json.loads(report.read_text())["cases"][0]["results"]}
    assert set(results) == {"faithfulness", "politeness"}  # no --metrics: those production scored
    assert (results["faithfulness"]["outcome"], results["faithfulness"]["threshold"]) == ("failed", 0.7)
    assert results["politeness"]["outcome"] == "passed"  # the custom criterion, judged over HTTP
    assert json.loads(report.read_text())["production"] == {
        "faithfulness": {"cases": 1, "same_outcome": 1},
        "politeness": {"cases": 1, "same_outcome": 1},
    }
    assert "against production" in out and "1 of 1" in out
    # What the judge saw went through the sidecar's outbound rewrite: the e-mail address was masked.
    prompts = json.dumps([request.body for request in judge.chat_requests])
    assert "politeness" in prompts or "polite" in prompts
    assert "jane.doe@example.com" not in prompts


def test_environment_overrides_and_flags_choose_as_run_does(
    judge: ScriptedOpenAIServer,
    cases: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    offline_config = tmp_path / "offline.yaml"
    offline_config.write_text(CRITERIA)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("RAGPULSE_JUDGE__BASE_URL", raising=False)
    code, _, err = _eval(capsys, str(cases), "--config", str(offline_config), "--metrics", "faithfulness")
    assert code == 0 and err[0] == f"judge: offline ({offline_config} sets no judge.base_url)"
    assert not judge.chat_requests
    # RAGPULSE_JUDGE__BASE_URL reaches `eval --config` as it reaches `run`.
    monkeypatch.setenv("RAGPULSE_JUDGE__BASE_URL", judge.base_url)
    code, _, err = _eval(capsys, str(cases), "--config", str(offline_config), "--metrics", "faithfulness")
    assert code == 0 and err[0] == f"judge: openai gpt-4o-mini at {judge.base_url} ({offline_config})"
    assert judge.chat_requests
    # An explicit --judge still wins over the config's.
    code, _, err = _eval(
        capsys, str(cases), "--config", str(offline_config), "--metrics", "faithfulness", "--judge", "offline"
    )
    assert code == 0 and err[0].startswith("judge: offline (--judge offline)")


def test_what_cannot_be_re_judged_is_named_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A custom criterion without the config that defines it, and a conversation metric (judged on the
    whole conversation, stored on its last turn) on cases that each hold one answer."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    retention = {"score": 1.0, "outcome": "passed", "threshold": 0.5, "judge": "openai"}
    metrics = {**CASE["metadata"]["metrics"], "knowledge_retention": retention}  # type: ignore[index]
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({**CASE, "metadata": {"metrics": metrics}}) + "\n")
    report = tmp_path / "report.json"
    code, _, err = _eval(capsys, str(cases), "--json", str(report))
    assert code == 0
    assert "not re-judged: politeness (custom criteria: give the sidecar's --config)" in err
    assert (
        "not re-judged: knowledge_retention (judged on whole conversations; each case holds one answer)"
        in err
    )
    assert [r["name"] for r in json.loads(report.read_text())["cases"][0]["results"]] == ["faithfulness"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("judge: {bogus: 1}\n", "judge.bogus: unknown key"),
        ("judge: {base_url: 'http://127.0.0.1:1/v1', api_key_file: /no/such/key}\n", "judge.api_key_file"),
        ("judge: [\n", "invalid YAML"),
    ],
)
def test_a_bad_config_is_one_line(
    text: str, message: str, cases: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    code, _, err = _eval(capsys, str(cases), "--config", str(config))
    assert code == 2 and len(err) == 1 and message in err[0], err
    assert err[0].startswith("error: ")
    code, _, err = _eval(capsys, str(cases), "--config", str(tmp_path / "missing.yaml"))
    assert code == 2 and len(err) == 1 and "missing.yaml" in err[0], err


def test_hand_written_cases_get_the_metrics_the_config_samples(
    judge: ScriptedOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "hand.jsonl"
    cases.write_text(
        json.dumps({key: CASE[key] for key in ("id", "input", "actual_output", "retrieval_context")})
    )
    config = tmp_path / "ragpulse.yaml"
    config.write_text(
        f'judge: {{base_url: "{judge.base_url}", model: scripted}}\n'
        + CRITERIA
        + "sampling: {metrics: [faithfulness, politeness], reference_metrics: [answer_correctness]}\n"
    )
    report = tmp_path / "report.json"
    code, out, _ = _eval(capsys, str(cases), "--config", str(config), "--json", str(report))
    assert code == 0, out
    results = {r["name"]: r["outcome"] for r in json.loads(report.read_text())["cases"][0]["results"]}
    assert results == {"faithfulness": "failed", "politeness": "passed", "answer_correctness": "unmeasured"}
    assert "against production" not in out and "production" not in json.loads(report.read_text())
