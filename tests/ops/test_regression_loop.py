"""The whole loop, as a team walks it: a deploy makes answers worse, the alert names the version, its
failing traces become test cases, and CI (`ragpulse eval --baseline`, then the pytest helper) keeps them.

Everything is real: `ragpulse run` with the page's store in a file, Prometheus with the shipped rules,
the `ragpulse export-cases` and `ragpulse eval` commands, and pytest running a generated test module
that uses `assert_rag` through the installed `pytest11` plugin.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evaluators.dataset import load_cases
from tests.ops.test_version_regression import SERVICE, regression_after_deploy

pytestmark = [pytest.mark.prometheus, pytest.mark.timeout(400)]

ROOT = Path(__file__).parents[2]


def ragpulse(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env=_clean_env(),
    )


def _clean_env() -> dict[str, str]:
    """No judge endpoint or key from the developer's shell: the offline judge, as in CI without secrets."""
    import os

    return {
        **{k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")},
        "PYTHONPATH": str(ROOT),
    }


def test_a_regression_after_deploy_becomes_a_failing_ci_case(tmp_path: Path) -> None:
    with regression_after_deploy(tmp_path) as run:
        alert = run.alert["labels"]
        assert (alert["service"], alert["version"], alert["metric"]) == (SERVICE, "v2", "faithfulness")
        store = str(run.store_path)
        v2_failures, v1_all = tmp_path / "v2-failures.jsonl", tmp_path / "v1.jsonl"
        # While the sidecar runs: the alert's version and metric pick the cases.
        exported = ragpulse(
            "export-cases", "--store", store, "--version", "v2", "--metric", "faithfulness",
            "--out", str(v2_failures),
        )  # fmt: skip
        assert exported.returncode == 0, exported.stderr
        baseline_cases = ragpulse(
            "export-cases", "--store", store, "--version", "v1", "--all", "--out", str(v1_all)
        )
        assert baseline_cases.returncode == 0, baseline_cases.stderr
        v2_trace_ids = run.trace_ids["v2"]

    failures = load_cases(v2_failures)
    assert failures and {case.metadata["trace_id"] for case in failures} <= v2_trace_ids
    assert all(case.metadata["service_version"] == "v2" for case in failures)
    assert all("faithfulness" in case.metadata["failed_metrics"] for case in failures)
    assert all(case.input and case.actual_output and case.retrieval_context for case in failures)

    # The release before the deploy is the baseline: its traffic, scored the same way.
    baseline = tmp_path / "v1-report.json"
    scored = ragpulse(
        "eval", str(v1_all), "--metrics", "faithfulness", "--json", str(baseline), "--no-progress"
    )
    assert scored.returncode == 0, scored.stderr
    assert "judge: offline" in scored.stderr
    assert json.loads(baseline.read_text())["metrics"][0]["pass_rate"] == 1.0

    # CI on the exported failures fails against that baseline, naming the metric.
    gate = ragpulse(
        "eval", str(v2_failures), "--metrics", "faithfulness", "--baseline", str(baseline),
        "--fail-on-regression", "--no-progress",
    )  # fmt: skip
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "faithfulness: pass rate 100.0% -> 0.0%" in gate.stdout + gate.stderr
    # The exported cases carry what production said: CI's offline judge agrees with the sidecar's.
    (agreement,) = [
        line for line in gate.stdout.splitlines() if line.startswith("│ faithfulness") and "of" in line
    ]
    assert agreement.split("│")[-2].strip() == f"{len(failures)} of {len(failures)}", gate.stdout
    assert "against production (judged by offline" in gate.stdout

    # And the app's own test suite, with the pytest helper, fails on the same cases (kept as a file).
    (tmp_path / "test_regressions.py").write_text(
        textwrap.dedent(
            f"""
            import pytest
            from evaluators import assert_rag
            from evaluators.dataset import load_cases

            @pytest.mark.parametrize("case", load_cases({str(v2_failures)!r})[:2], ids=lambda c: c.id)
            def test_exported_failure(case, ragpulse_judge):
                assert_rag(case, ["faithfulness"], judge=ragpulse_judge)
            """
        )
    )
    pytest_run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--ragpulse-judge", "offline",
         "test_regressions.py"],
        capture_output=True, text=True, timeout=180, cwd=tmp_path, env=_clean_env(),
    )  # fmt: skip
    assert pytest_run.returncode == 1, pytest_run.stdout + pytest_run.stderr
    assert "2 failed" in pytest_run.stdout and "faithfulness" in pytest_run.stdout
