"""Amazon Bedrock's quality criteria for RAG answers: helpfulness, completeness, logical coherence.

Bedrock Evaluations grades each with an LLM judge on a published Likert scale (helpfulness 7 levels,
completeness and logical coherence 5) and normalises the level to 0..1. That is G-Eval's arithmetic
with fixed steps and a rubric, so each is a `GEval` whose steps and levels are written here, in
`BEDROCK_RUBRICS` (the one place to read or change them): 1 judge call per case, no steps call, and
the probability-weighted score when the endpoint returns log-probabilities. The offline judge cannot
grade free criteria: `unmeasured`, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Unpack

from evaluators.case import CaseField
from evaluators.metrics.base import MetricOptions
from evaluators.metrics.critique import GEval


@dataclass(frozen=True, slots=True)
class BedrockRubric:
    steps: tuple[str, ...]
    levels: tuple[str, ...]  # worst first: level k of n scores (k - 1) / (n - 1)


# Bedrock's definitions and scales (Bedrock User Guide, "Use metrics to understand RAG system
# performance" and its judge prompts), worded as steps for the judge.
BEDROCK_RUBRICS: dict[str, BedrockRubric] = {
    "helpfulness": BedrockRubric(
        steps=(
            "Read the question and decide what a person asking it needs.",
            "Judge how useful the response is for that need: does it answer, is it accurate, clear and "
            "appropriately detailed, does it anticipate an obvious follow-up?",
            "Pick the level of the rubric that fits.",
        ),
        levels=(
            "not helpful at all",
            "very unhelpful",
            "somewhat unhelpful",
            "neither helpful nor unhelpful",
            "somewhat helpful",
            "very helpful",
            "above and beyond",
        ),
    ),
    "completeness": BedrockRubric(
        steps=(
            "List every part of the question: each thing it asks for.",
            "Check which parts the response answers, fully and explicitly.",
            "Pick the level of the rubric: how well the response answers every part of the question.",
        ),
        levels=("not at all", "not generally", "neutral/mixed", "generally yes", "yes"),
    ),
    "logical_coherence": BedrockRubric(
        steps=(
            "Follow the response's reasoning from its premises to its conclusions.",
            "Look for logical gaps, inconsistencies and contradictions, within the response or with "
            "itself across sentences (not whether its facts are true).",
            "Pick the level of the rubric: is the response logically coherent?",
        ),
        levels=("not at all", "not generally", "neutral/mixed", "generally yes", "yes"),
    ),
}


def _rubric_text(levels: tuple[str, ...]) -> str:
    return "; ".join(f"{number}: {level}" for number, level in enumerate(levels, 1))


class _BedrockRubricMetric(GEval):
    """A Bedrock Likert criterion: G-Eval with Bedrock's steps and levels, named as Bedrock names it."""

    criterion: ClassVar[str]
    required_fields = (CaseField.INPUT, CaseField.ACTUAL_OUTPUT)

    def __init__(self, **options: Unpack[MetricOptions]) -> None:
        rubric = BEDROCK_RUBRICS[self.criterion]
        super().__init__(
            self.criterion,
            evaluation_steps=rubric.steps,
            evaluation_params=self.required_fields,
            rubric=_rubric_text(rubric.levels),
            score_range=(1, len(rubric.levels)),
            **options,
        )
        self.name = self.criterion


class Helpfulness(_BedrockRubricMetric):
    """How useful the response is for the question (Bedrock Builtin.Helpfulness, 7 levels)."""

    name = criterion = "helpfulness"


class Completeness(_BedrockRubricMetric):
    """How well the response answers every part of the question (Bedrock Builtin.Completeness)."""

    name = criterion = "completeness"


class LogicalCoherence(_BedrockRubricMetric):
    """Logical gaps, inconsistencies and contradictions in the response (Bedrock
    Builtin.Coherence / "logical coherence")."""

    name = criterion = "logical_coherence"
