"""Read test cases from JSONL, JSON or CSV, under deepeval's or ragas' field names.

Cases written by `ragpulse export-cases` carry every field a metric reads (`expected_output`,
`context`, `reference_context_ids`, `baseline_output`) and, in `metadata.metrics`, what production
scored: each metric's outcome, score, threshold and the judge that gave it. `production_result` reads
those back as an evaluation, so `ragpulse eval` shows where CI's judge and production's disagree; where
a reviewer corrected a metric, `reviewers_result` reads the outcome they said is right, so it shows
which of the two judges the people agree with.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evaluators.case import TestCase
from evaluators.result import CaseResult, EvaluationResult, MetricResult, MetricSummary, Outcome


class DatasetError(ValueError):
    """The file cannot be read as test cases; the message names the file and the line or row."""


def load_cases(path: str | Path) -> list[TestCase]:
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    suffix = path.suffix.lower()
    text = path.read_text(encoding="utf-8-sig")
    if suffix == ".jsonl":
        rows = [
            (f"line {n}", _json(path, line, f"line {n}"))
            for n, line in enumerate(text.splitlines(), 1)
            if line.strip()
        ]
    elif suffix == ".json":
        document = _json(path, text, "document")
        if isinstance(document, dict):
            document = document.get("cases", document.get("test_cases", [document]))
        if not isinstance(document, list):
            raise DatasetError(f"{path}: expected a list of test cases")
        rows = [(f"item {n}", row) for n, row in enumerate(document)]
    elif suffix == ".csv":
        # Not splitlines(): a quoted cell may hold newlines (a multi-paragraph passage or answer).
        reader = csv.DictReader(io.StringIO(text, newline=""))
        try:
            rows = [(f"row {n}", row) for n, row in enumerate(reader, 2)]
        except csv.Error as error:
            raise DatasetError(f"{path}: line {reader.line_num}: invalid CSV: {error}") from None
    else:
        raise DatasetError(f"{path}: unsupported extension {suffix!r} (use .jsonl, .json or .csv)")
    cases = []
    for where, row in rows:
        if not isinstance(row, dict):
            raise DatasetError(f"{path}: {where}: expected an object")
        try:
            case = TestCase.model_validate(row)
        except ValidationError as error:
            first = error.errors()[0]
            raise DatasetError(
                f"{path}: {where}: {'.'.join(map(str, first['loc']))}: {first['msg']}"
            ) from None
        cases.append(case if case.id else case.model_copy(update={"id": where.replace(" ", "-")}))
    if not cases:
        raise DatasetError(f"{path}: no test cases")
    return cases


def with_baseline_answers(cases: list[TestCase], baseline: list[TestCase]) -> list[TestCase]:
    """Each case with the baseline run's answer to it as `baseline_output` (pairwise comparison),
    matched by case id (files without ids match line by line: their ids are `line-N`)."""
    answers = {case.id: case.actual_output for case in baseline if case.actual_output}
    return [
        case.model_copy(update={"baseline_output": answers[case.id]}) if case.id in answers else case
        for case in cases
    ]


def production_result(cases: list[TestCase]) -> EvaluationResult | None:
    """What production scored for exported cases (`metadata.metrics`), as an evaluation to compare
    with; None when no case carries production results. A metric's entry that cannot be read (an
    unknown outcome, no threshold) is left out, never guessed."""
    result = _as_evaluation(cases, _production_metric)
    if result is None:
        return None
    judges = {
        (str(entry.get("judge") or "?"), str(entry.get("judge_model") or ""))
        for case in cases
        for entry in _production_entries(case).values()
    }
    (judge, model), *others = sorted(judges)
    return result.model_copy(
        update={"judge": {"judge": "several" if others else judge, "model": "" if others else model}}
    )


def reviewers_result(cases: list[TestCase]) -> EvaluationResult | None:
    """The outcomes reviewers said are right (`metadata.metrics[name].human.outcome`, exported from the
    page's corrections), as an evaluation both judges are compared with; None when no case has one.
    A reviewer gives an outcome, not a score: the results carry none."""
    result = _as_evaluation(cases, _reviewers_metric)
    return None if result is None else result.model_copy(update={"judge": {"judge": "reviewers"}})


def _as_evaluation(
    cases: list[TestCase], read: Callable[[str, dict[str, Any]], MetricResult | None]
) -> EvaluationResult | None:
    """The results `read` finds in each case's `metadata.metrics`, summarised per metric."""
    case_results = []
    for case in cases:
        results = [
            result
            for name, entry in sorted(_production_entries(case).items())
            if (result := read(name, entry)) is not None
        ]
        if results:
            case_results.append(CaseResult(case_id=case.id or "?", results=results))
    if not case_results:
        return None
    names = sorted({r.name for case in case_results for r in case.results})
    return EvaluationResult(cases=case_results, metrics=[_summary(name, case_results) for name in names])


def production_metrics(cases: list[TestCase]) -> list[str]:
    """The metrics production scored on these cases, in name order (empty for hand-written cases)."""
    return sorted({name for case in cases for name in _production_entries(case)})


def _production_entries(case: TestCase) -> dict[str, dict[str, Any]]:
    metrics = case.metadata.get("metrics")
    if not isinstance(metrics, dict):
        return {}
    return {str(name): entry for name, entry in metrics.items() if isinstance(entry, dict)}


def _production_metric(name: str, entry: dict[str, Any]) -> MetricResult | None:
    try:
        outcome = Outcome(str(entry.get("outcome")))
        score = entry.get("score") if outcome in (Outcome.PASSED, Outcome.FAILED) else None
        return MetricResult(
            name=name,
            outcome=outcome,
            score=score,
            passed=outcome is Outcome.PASSED if score is not None else None,
            threshold=entry["threshold"],
            lower_is_better=bool(entry.get("lower_is_better")),
            reason=entry.get("reason") or "",
        )
    except (ValueError, KeyError, TypeError, ValidationError):
        return None


def _reviewers_metric(name: str, entry: dict[str, Any]) -> MetricResult | None:
    human = entry.get("human")
    if not isinstance(human, dict) or human.get("outcome") not in (Outcome.PASSED, Outcome.FAILED):
        return None  # no review, or only claims marked
    outcome = human["outcome"]
    threshold = entry.get("threshold")
    return MetricResult(
        name=name,
        outcome=Outcome(outcome),
        passed=outcome == Outcome.PASSED,
        threshold=threshold if isinstance(threshold, int | float) else 0.0,  # shown, never used
        lower_is_better=bool(entry.get("lower_is_better")),
        reason=f"corrected by {human.get('reviewer') or '?'}",
    )


def _summary(name: str, cases: list[CaseResult]) -> MetricSummary:
    results = [r for case in cases for r in case.results if r.name == name]
    scores = [r.score for r in results if r.score is not None]
    judged = [r for r in results if r.outcome is not Outcome.UNMEASURED]
    return MetricSummary(
        name=name,
        lower_is_better=results[0].lower_is_better,
        mean=sum(scores) / len(scores) if scores else None,
        pass_rate=sum(r.outcome is Outcome.PASSED for r in judged) / len(judged) if judged else None,
        counts={o: sum(r.outcome is o for r in results) for o in Outcome},
    )


def _json(path: Path, text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}: {where}: invalid JSON: {error.msg}") from None
