"""Custom criteria by name: G-Eval rubrics and aspect critiques declared as data (YAML or Python).

The same `custom_metrics:` section serves the sidecar's config file (scored online like built-in metrics)
and `ragpulse eval --custom-metrics FILE`, so a criterion tried in CI runs unchanged on live traffic:

    custom_metrics:
      politeness:                  # the metric's name: in sampling.metrics, --metrics, metric="politeness"
        kind: geval
        criteria: Is the answer polite and free of blame towards the user?
        threshold: 0.6
      cites_a_source:
        kind: aspect
        definition: Does the answer name the document it relies on?
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

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
_SPECS: TypeAdapter[CustomMetrics] = TypeAdapter(CustomMetrics)


class CustomMetricsError(ValueError):
    """A custom metrics file or section cannot be used; the message is one line naming where."""


def check_names(specs: CustomMetrics, taken: set[str]) -> None:
    """Custom names are snake_case and never shadow a built-in metric (or its alias)."""
    for name in specs:
        if not NAME.match(name):
            raise CustomMetricsError(f"custom metric name {name!r}: use lower snake_case (a-z, 0-9, _)")
        if name in taken:
            raise CustomMetricsError(f"custom metric name {name!r} is a built-in metric; choose another name")


def parse_custom_metrics(raw: Any, where: str = "custom_metrics") -> CustomMetrics:
    """Specs from the decoded YAML section; errors name the metric and field, in one line."""
    if raw is None:
        return {}
    try:
        specs = _SPECS.validate_python(raw)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        location = ".".join(str(part) for part in first["loc"] if part not in ("geval", "aspect"))
        message = first["msg"].removeprefix("Value error, ")
        raise CustomMetricsError(f"{where}.{location}: {message}") from None
    from evaluators.metrics.registry import check_custom  # the registry imports this module

    check_custom(specs)
    return specs


def load_custom_metrics(path: str | Path) -> CustomMetrics:
    """The `custom_metrics:` section of a YAML file (a sidecar config file works as it is)."""
    document = _yaml_mapping(Path(path))
    if "custom_metrics" not in document:
        raise CustomMetricsError(f"{path}: no top-level 'custom_metrics:' section")
    return parse_custom_metrics(document["custom_metrics"], f"{path}: custom_metrics")


def load_sidecar_metrics(path: str | Path) -> tuple[CustomMetrics, dict[str, dict[str, Any]]]:
    """A sidecar config file's custom criteria and per-metric options (`metrics.options`, thresholds
    included), so `ragpulse eval --config` scores a case as the sidecar did."""
    document = _yaml_mapping(Path(path))
    custom = parse_custom_metrics(document.get("custom_metrics"), f"{path}: custom_metrics")
    options = (document.get("metrics") or {}).get("options") or {}
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise CustomMetricsError(f"{path}: metrics.options must map metric names to options")
    return custom, options


def _yaml_mapping(path: Path) -> dict[str, Any]:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CustomMetricsError(f"{path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise CustomMetricsError(f"{path}: {yaml_problem(error)}") from None
    if not isinstance(document, dict):
        raise CustomMetricsError(f"{path}: the top level must be a mapping")
    return document


def yaml_problem(error: yaml.YAMLError) -> str:
    """'line 3, column 7: mapping values are not allowed here', without PyYAML's multi-line excerpt."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"invalid YAML: {where}{problem}"
