"""Custom criteria as data: the G-Eval and aspect-critique specs, and the rule for their names.

The registry makes metrics from these specs and `evaluators.metrics.custom` reads them from YAML; both
import this module, which imports neither (so the registry and the YAML reader do not import each other).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluators.case import CaseField
from evaluators.metrics.base import Metric
from evaluators.metrics.critique import AspectCritique, GEval

NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


class GEvalSpec(BaseModel):
    """A G-Eval rubric: the judge scores `evaluation_params` against the criteria (or the steps)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["geval"] = "geval"
    criteria: str | None = None
    evaluation_steps: list[str] | None = None
    evaluation_params: list[CaseField] = Field(
        default_factory=lambda: [CaseField.INPUT, CaseField.ACTUAL_OUTPUT],
        description="Fields the judge reads: input, actual_output, retrieval_context, expected_output.",
    )
    rubric: str | None = Field(None, description="What each score means, shown to the judge.")
    score_range: tuple[int, int] = (1, 10)
    threshold: float = Field(0.5, ge=0.0, le=1.0)
    strict_mode: bool = False

    @model_validator(mode="after")
    def _has_criteria(self) -> GEvalSpec:
        if not self.criteria and not self.evaluation_steps:
            raise ValueError("a geval metric needs criteria or evaluation_steps")
        if self.score_range[1] <= self.score_range[0]:
            raise ValueError("score_range must be [low, high] with high > low")
        return self

    def build(self, name: str, **options: Any) -> Metric:
        metric = GEval(
            name,
            criteria=self.criteria,
            evaluation_steps=self.evaluation_steps,
            evaluation_params=self.evaluation_params,
            rubric=self.rubric,
            score_range=self.score_range,
            **{"threshold": self.threshold, "strict_mode": self.strict_mode, **options},
        )
        metric.name = name
        return metric


class AspectSpec(BaseModel):
    """A yes/no aspect critique (majority of `strictness` votes): 1 when the aspect is present."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["aspect"]
    definition: str = Field(min_length=1, description="The yes/no question asked of the answer.")
    strictness: int = Field(3, ge=1, le=9)
    lower_is_better: bool = Field(False, description="True when the aspect is a fault (e.g. harmfulness).")
    threshold: float = Field(0.5, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _odd(self) -> AspectSpec:
        if self.strictness % 2 == 0:
            raise ValueError("strictness must be odd (a majority vote)")
        return self

    def build(self, name: str, **options: Any) -> Metric:
        metric = AspectCritique(
            name,
            self.definition,
            strictness=self.strictness,
            lower_is_better=self.lower_is_better,
            **{"threshold": self.threshold, **options},
        )
        metric.name = name
        return metric


CustomMetricSpec = Annotated[GEvalSpec | AspectSpec, Field(discriminator="kind")]
CustomMetrics = dict[str, CustomMetricSpec]


class CustomMetricsError(ValueError):
    """A custom metrics file or section cannot be used; the message is one line naming where."""


def check_names(specs: CustomMetrics, taken: set[str]) -> None:
    """Custom names are snake_case and never shadow a built-in metric (or its alias)."""
    for name in specs:
        if not NAME.match(name):
            raise CustomMetricsError(f"custom metric name {name!r}: use lower snake_case (a-z, 0-9, _)")
        if name in taken:
            raise CustomMetricsError(f"custom metric name {name!r} is a built-in metric; choose another name")
