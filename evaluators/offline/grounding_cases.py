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


async def judged_label(judge: Judge, case: Mapping[str, Any]) -> tuple[str, str]:
    """(label, detail): what the judge makes of a case, in the vocabulary of `expect`.

    For grounding cases: supported (every claim supported), contradicted (some claim not supported
    and the answer judged contradicted) or unsupported (the rest). For relevance cases (`expect`
    relevant / irrelevant): relevant or irrelevant."""
    expect, contexts, answer = case["expect"], case["contexts"], case["answer"]
    if expect in ("irrelevant", "relevant"):
        verdict = (await judge.verdicts([answer], [case["question"]], VerdictTask.RELEVANT))[0]
        label = "relevant" if verdict.verdict == "yes" else "irrelevant"
        return label, f"relevant={verdict.verdict}: {verdict.reason}"
    claims = await judge.extract(answer, ExtractKind.CLAIMS, question=case["question"])
    verdicts = await judge.verdicts(claims, contexts, VerdictTask.SUPPORTED)
    detail = " | ".join(f"{v.verdict}: {v.reason}" for v in verdicts)
    if all(v.verdict == "yes" for v in verdicts):
        return "supported", detail
    # As the hallucination metric asks: is some passage contradicted by the answer's claims (a bare
    # 'Yes.' is its claim, not its words)?
    verdicts = await judge.verdicts(contexts, claims, VerdictTask.CONTRADICTED)
    found = [v for v in verdicts if v.verdict == "yes"]
    label = "contradicted" if found else "unsupported"
    return label, f"{detail} || contradicted={'yes' if found else 'no'}"


def is_right(expect: str, label: str) -> bool:
    """An 'unsupported' expectation is met by a contradiction too; the others need their own label."""
    return label in ("unsupported", "contradicted") if expect == "unsupported" else label == expect


async def judge_case(judge: Judge, case: Mapping[str, Any]) -> tuple[bool, str]:
    """Judge one hand-written case as a metric would; True when the verdict matches `expect`."""
    label, detail = await judged_label(judge, case)
    return is_right(case["expect"], label), detail
