"""Read test cases from JSONL, JSON or CSV, under deepeval's or ragas' field names."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evaluators.case import TestCase


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


def _json(path: Path, text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}: {where}: invalid JSON: {error.msg}") from None
