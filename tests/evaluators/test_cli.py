"""`ragpulse eval` (evaluators.cli.main) with the openai judge against the scripted server."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evaluators.cli import main
from testkit.openai_server import ScriptedOpenAIServer

ROWS = [
    {
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France.",
        "contexts": ["Paris is the capital of France."],
        "ground_truth": "Paris.",
    },
    {
        "question": "Who wrote Hamlet?",
        "answer": "Shakespeare wrote Hamlet. <script>alert(1)</script> is safe.",
        "contexts": ["Hamlet is a play by William Shakespeare."],
        "ground_truth": "William Shakespeare.",
    },
]


def write_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n")
    return path


def run(server: ScriptedOpenAIServer, dataset: Path, *extra: str) -> int:
    return main(
        [
            str(dataset),
            "--base-url",
            server.base_url,
            "--model",
            "scripted",
            "--timeout",
            "2",
            "--no-progress",
            *extra,
        ]
    )


def test_jsonl_with_json_and_html_reports(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    openai_server.script.task_verdicts[("supported", "<script>")] = "no"
    json_out, html_out = tmp_path / "out.json", tmp_path / "out.html"
    code = run(
        openai_server,
        write_jsonl(tmp_path),
        "--metrics",
        "faithfulness,answer_relevancy",
        "--json",
        str(json_out),
        "--html",
        str(html_out),
    )
    assert code == 0
    report = json.loads(json_out.read_text())
    assert [m["name"] for m in report["metrics"]] == ["faithfulness", "answer_relevancy"]
    assert report["metrics"][0]["mean"] == pytest.approx((1.0 + 0.5) / 2)
    html = html_out.read_text()
    assert "<svg" in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "Shakespeare wrote Hamlet." in html  # every claim with its verdict


def test_fail_under_exits_non_zero(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    openai_server.script.task_verdicts[("supported", "Shakespeare")] = "no"
    openai_server.script.task_verdicts[("supported", "<script>")] = "no"  # second case fails: pass rate 50%
    dataset = write_jsonl(tmp_path)
    assert run(openai_server, dataset, "--metrics", "faithfulness", "--fail-under", "0.9") == 1
    assert run(openai_server, dataset, "--metrics", "faithfulness", "--fail-under", "0.5") == 0


def test_csv_with_deepeval_names_and_progress(
    openai_server: ScriptedOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cases.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["input", "actual_output", "retrieval_context", "expected_output"])
        writer.writeheader()
        for row in ROWS:
            writer.writerow(
                {
                    "input": row["question"],
                    "actual_output": row["answer"],
                    "retrieval_context": json.dumps(row["contexts"]),
                    "expected_output": row["ground_truth"],
                }
            )
    code = main(
        [
            str(path),
            "--base-url",
            openai_server.base_url,
            "--model",
            "scripted",
            "--metrics",
            "contextual_precision,contextual_recall",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "contextual_precision" in out and "ragas_score" in out


def test_bad_input_exits_2(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "q"}\nnot json\n')
    assert run(openai_server, broken) == 2
    assert run(openai_server, write_jsonl(tmp_path), "--metrics", "no_such_metric") == 2
    assert run(openai_server, tmp_path / "missing.jsonl") == 2
