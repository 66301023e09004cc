"""Custom criteria by name: G-Eval rubrics and aspect critiques declared as data (YAML or Python),
read here from YAML (the specs themselves are `evaluators.metrics.custom_specs`).

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

from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from evaluators.metrics.custom_specs import CustomMetrics, CustomMetricsError  # importers find them here
from evaluators.metrics.registry import check_custom

_SPECS: TypeAdapter[CustomMetrics] = TypeAdapter(CustomMetrics)


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
