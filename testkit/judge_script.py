"""What the scripted judge of `ScriptedOpenAIServer` answers: extractions, verdicts, rubric scores, vectors.

A test scripts only what it is about (a verdict keyed by a substring of the item, of a reference, of
the prompt's instruction); everything else gets a plausible default, so the server can stand in for
a judge model in any test or benchmark.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Any


@dataclass
class JudgeScript:
    """What the scripted judge answers. Verdict lookups match a key as a substring of the item."""

    extractions: dict[str, list[str]] = field(default_factory=dict)  # exact TEXT -> items
    verdicts: dict[str, str] = field(default_factory=dict)  # item substring -> yes / no / idk
    # (task, item substring) or (task, item substring, substring of some reference) -> verdict;
    # a 4th element must be in the prompt's instruction (to tell apart metrics asking the same task)
    task_verdicts: dict[tuple[str, ...], str] = field(default_factory=dict)
    # the same keys -> the reference ids the verdict names (default: for a "yes", the references
    # sharing most words with the item)
    ids: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    default_verdict: str = "yes"
    # An answer is no refusal unless scripted so (the other tasks default to `default_verdict`).
    task_defaults: dict[str, str] = field(default_factory=lambda: {"contradicted": "no", "refuses": "no"})
    questions: list[str] | None = None
    noncommittal: bool = False
    steps: list[str] = field(default_factory=lambda: ["Check each fact.", "Penalise invented content."])
    rubric_score: int = 7
    rubric_probabilities: dict[int, float] | None = None  # returned as top_logprobs when asked
    embeddings: dict[str, list[float]] = field(default_factory=dict)

    def extract(self, text: str, kind: str) -> list[str]:
        if text in self.extractions:
            return list(self.extractions[text])
        if kind == "entities":
            return list(dict.fromkeys(re.findall(r"\b(?:[A-Z][\w-]*(?: [A-Z][\w-]*)*|\d[\d,.]*)", text)))
        return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]

    def verdict(
        self, task: str, item: str, references: list[str], prompt: str = "", *, cot: bool = False
    ) -> dict[str, Any]:
        """`prompt`: the request's text (4-element keys match in it). `cot`: the prompt asked for
        chain-of-thought reasons; the reason then quotes the reference the verdict rests on and walks to
        the verdict, as long as a model's would be."""
        value = next(
            (v for key, v in self.task_verdicts.items() if _matches(key, task, item, references, prompt)),
            None,
        )
        default = self.task_defaults.get(task, self.default_verdict)
        value = value or next((v for key, v in self.verdicts.items() if key in item), default)
        scripted = next(
            (i for key, i in self.ids.items() if _matches(key, task, item, references, prompt)), None
        )
        if scripted is not None:
            ids = list(scripted)
        elif value == "yes" and task in ("supported", "contradicted", "answerable"):
            ids = _overlapping(item, references)
        else:
            ids = []
        reason = _cot_reason(item, value, references, ids) if cot else f"scripted {value}"
        return {"verdict": value, "reason": reason, "ids": ids}

    def embed(self, text: str) -> list[float]:
        if text in self.embeddings:
            return list(self.embeddings[text])
        vector = [0.0] * 64
        vector[0] = 0.05  # never a zero vector
        for word in re.findall(r"\w+", text.lower()):
            vector[1 + zlib.crc32(word.encode()) % 63] += 1.0
        return vector


def _matches(key: tuple[str, ...], task: str, item: str, references: list[str], prompt: str) -> bool:
    if key[0] != task or key[1] not in item:
        return False
    if len(key) > 3 and key[3] not in prompt:
        return False
    return len(key) < 3 or any(key[2] in reference for reference in references)


_COT_STEP = {
    "yes": "the evidence states it",
    "no": "the evidence says otherwise",
    "idk": "the evidence does not address it",
}


def _cot_reason(item: str, value: str, references: list[str], ids: list[int]) -> str:
    quoted = next((references[i] for i in ids if 0 <= i < len(references)), None)
    if quoted is None:
        quoted = next((references[i] for i in _overlapping(item, references)), None)
    evidence = f'"{quoted[:200]}"' if quoted else "nothing in REFERENCES"
    return (
        f"Evidence: {evidence}. Step 1: the item says: {item[:200]} "
        f"Step 2: compared with the evidence, {_COT_STEP.get(value, value)}. So the verdict is {value}."
    )


def _overlapping(item: str, references: list[str]) -> list[int]:
    words = set(re.findall(r"\w+", item.lower()))
    overlaps = [len(words & set(re.findall(r"\w+", ref.lower()))) for ref in references]
    best = max(overlaps, default=0)
    return [i for i, o in enumerate(overlaps) if o == best and best > 0]
