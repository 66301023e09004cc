"""The hand-written grounding cases (tests/data/grounding_cases.jsonl) and how a judge is scored on one.

Each case is a JSON object with `id`, `category`, `question`, `contexts`, `answer` and `expect`
(supported, unsupported, contradicted, irrelevant or relevant). The tests hold the offline judge
to per-category floors on them; `python -m benchmarks.judge_accuracy` reports the same figures.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluators.judges.base import ExtractKind, Judge, VerdictTask


def load_cases(path: Path) -> list[dict[str, Any]]:
    """The cases of a JSONL file, one object a line (blank lines skipped)."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


async def judge_case(judge: Judge, case: Mapping[str, Any]) -> tuple[bool, str]:
    """Judge one hand-written case as a metric would; True when the verdict matches `expect`.

    supported: every claim supported. unsupported: some claim not supported. contradicted: some
    claim not supported AND the answer judged contradicted. irrelevant / relevant: the answer
    judged not relevant / relevant to the question.
    """
    expect, contexts, answer = case["expect"], case["contexts"], case["answer"]
    if expect in ("irrelevant", "relevant"):
        verdict = (await judge.verdicts([answer], [case["question"]], VerdictTask.RELEVANT))[0]
        wanted = "no" if expect == "irrelevant" else "yes"
        return verdict.verdict == wanted, f"relevant={verdict.verdict}: {verdict.reason}"
    claims = await judge.extract(answer, ExtractKind.CLAIMS, question=case["question"])
    verdicts = await judge.verdicts(claims, contexts, VerdictTask.SUPPORTED)
    supported = all(v.verdict == "yes" for v in verdicts)
    detail = " | ".join(f"{v.verdict}: {v.reason}" for v in verdicts)
    if expect == "supported":
        return supported, detail
    if expect == "unsupported":
        return not supported, detail
    contradicted = (await judge.verdicts([answer], contexts, VerdictTask.CONTRADICTED))[0]
    return not supported and contradicted.verdict == "yes", f"{detail} || contradicted={contradicted.verdict}"
