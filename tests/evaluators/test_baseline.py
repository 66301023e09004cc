"""`evaluators.baseline.compare` and `ragpulse eval --baseline` / `--fail-on-regression`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.baseline import BaselineError, compare, load_baseline
from evaluators.cli import main
from evaluators.result import CaseResult, EvaluationResult, MetricResult, MetricSummary, Outcome
from testkit.openai_server import ScriptedOpenAIServer


def result(outcomes: dict[str, dict[str, tuple[Outcome, float | None]]]) -> EvaluationResult:
    """An evaluation from {case id: {metric: (outcome, score)}}, with summaries computed plainly."""
    cases = [
        CaseResult(
            case_id=case_id,
            results=[
                MetricResult(
                    name=name,
                    outcome=outcome,
                    score=score,
                    threshold=0.5,
                    lower_is_better=name == "hallucination",
                )
                for name, (outcome, score) in metrics.items()
            ],
        )
        for case_id, metrics in outcomes.items()
    ]
    names = list(dict.fromkeys(n for m in outcomes.values() for n in m))
    summaries = []
    for name in names:
        rs = [r for c in cases for r in c.results if r.name == name]
        scored = [r.score for r in rs if r.score is not None]
        judged = [r for r in rs if r.outcome is not Outcome.UNMEASURED]
        summaries.append(
            MetricSummary(
                name=name,
                lower_is_better=name == "hallucination",
                mean=sum(scored) / len(scored) if scored else None,
                pass_rate=sum(r.outcome is Outcome.PASSED for r in judged) / len(judged) if judged else None,
            )
        )
    return EvaluationResult(cases=cases, metrics=summaries)


P, F, E = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR
BEFORE = result(
    {
        "a": {"faithfulness": (P, 1.0), "hallucination": (P, 0.0)},
        "b": {"faithfulness": (F, 0.2), "hallucination": (P, 0.0)},
        "c": {"faithfulness": (P, 0.9), "hallucination": (P, 0.0)},
        "gone": {"faithfulness": (P, 1.0)},
    }
)
NOW = result(
    {
        "a": {"faithfulness": (F, 0.3), "hallucination": (F, 1.0)},  # both regress
        "b": {"faithfulness": (P, 0.8), "hallucination": (P, 0.0)},  # fixed
        "c": {"faithfulness": (E, None), "hallucination": (P, 0.0)},  # a judge error: changed
        "new": {"faithfulness": (P, 1.0)},
    }
)


def test_compare_per_metric_and_per_case() -> None:
    comparison = compare(NOW, BEFORE)
    faithfulness, hallucination = comparison.metrics
    assert faithfulness.pass_rate_before == pytest.approx(0.75)
    assert faithfulness.pass_rate_now == pytest.approx(0.5)
    assert faithfulness.pass_rate_change == pytest.approx(-0.25)
    assert faithfulness.mean_worse and faithfulness.pass_rate_dropped(0.2)
    assert not faithfulness.pass_rate_dropped(0.25)
    # Hallucination's mean went up: worse, since lower is better.
    assert hallucination.lower_is_better and hallucination.mean_worse
    kinds = {(c.case_id, c.metric): c.kind for c in comparison.cases}
    assert kinds == {
        ("a", "faithfulness"): "regression",
        ("a", "hallucination"): "regression",
        ("b", "faithfulness"): "fixed",
        ("c", "faithfulness"): "changed",
    }
    (fixed,) = comparison.fixed
    assert fixed.score_change == pytest.approx(0.6)


def test_agreement_counts_pairs_present_in_both() -> None:
    comparison = compare(NOW, BEFORE)
    assert comparison.agreement("faithfulness") == pytest.approx(0 / 3)  # a, b, c changed; gone/new unpaired
    assert comparison.agreement("hallucination") == pytest.approx(2 / 3)
    assert comparison.agreement("unknown") is None
    assert compare(BEFORE, BEFORE).agreement("faithfulness") == 1.0


def test_failures_name_the_reasons() -> None:
    failures = compare(NOW, BEFORE).failures(tolerance=0.0)
    assert any("faithfulness: pass rate 75.0% -> 50.0%" in line for line in failures)
    assert "hallucination: 1 case(s) passed before and fail now" in failures
    assert compare(BEFORE, BEFORE).failures() == []


def test_a_bad_baseline_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"cases": "nope"}')
    with pytest.raises(BaselineError, match="not a `ragpulse eval --json` report") as error:
        load_baseline(bad)
    assert "\n" not in str(error.value)
    with pytest.raises(BaselineError, match="cannot read"):
        load_baseline(tmp_path / "missing.json")


ROWS = [
    {
        "id": "paris",
        "question": "Capital of France?",
        "answer": "Paris is the capital.",
        "contexts": ["Paris."],
    },
    {"id": "hamlet", "question": "Who wrote Hamlet?", "answer": "Shakespeare did.", "contexts": ["Hamlet."]},
]


def test_cli_baseline_flags_a_regression(
    openai_server: ScriptedOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text("\n".join(json.dumps(row) for row in ROWS))
    base = [str(dataset), "--base-url", openai_server.base_url, "--model", "m", "--no-progress"]
    before, now = tmp_path / "before.json", tmp_path / "now.json"
    assert main([*base, "--metrics", "faithfulness", "--json", str(before)]) == 0
    openai_server.script.task_verdicts[("supported", "Shakespeare")] = "no"  # the change breaks hamlet
    capsys.readouterr()
    args = [*base, "--metrics", "faithfulness", "--baseline", str(before), "--json", str(now)]
    assert main(args) == 0  # without --fail-on-regression a regression is reported, not fatal
    out = capsys.readouterr().out
    assert "against the baseline" in out and "1 regressed, 0 fixed" in out
    assert "regression: case hamlet faithfulness passed -> failed 1.0000 -> 0.0000" in out
    report = json.loads(now.read_text())
    assert report["comparison"]["regressions"] == 1
    assert report["comparison"]["agreement"]["faithfulness"] == 0.5
    assert main([*args, "--fail-on-regression"]) == 1
    err = capsys.readouterr().err
    assert "regression: faithfulness: pass rate 100.0% -> 50.0%" in err
    # The report with a comparison inside still reads back as a baseline; no change against itself.
    assert main([*base, "--metrics", "faithfulness", "--baseline", str(now), "--fail-on-regression"]) == 0
