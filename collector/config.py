"""Configuration: one YAML file plus `RAGPULSE_*` environment variables (nested with `__`).

Precedence: command-line flags > environment > YAML file > defaults; `load_settings` merges the
layers explicitly. Each component's config model sits beside its code and `Settings` only
composes them. Settings are immutable once loaded (`with_values` makes a changed copy). Secrets
(the judge API key, OTLP headers) are `SecretStr`, so they never appear in logs or dumps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from collector.assembly.assembler import AssemblyConfig
from collector.conventions import ExtractionConfig
from collector.errors import ConfigError
from collector.exporters.kafka_results import KafkaResultsConfig
from collector.exporters.otel_spans import OtelExportConfig
from collector.exporters.phoenix import PhoenixConfig
from collector.exporters.verdicts import VerdictLimits
from collector.feedback.agreement import FeedbackConfig
from collector.feedback.canary import CanaryConfig
from collector.judging.config import JudgeConfig, MetricsConfig
from collector.labels import LabelsConfig
from collector.page.config import PageConfig
from collector.pipeline.queue import EvaluationConfig
from collector.receivers.kafka import KafkaConfig
from collector.receivers.otlp import OtlpConfig
from collector.review.config import ReviewConfig
from collector.sampling.sampler import SamplingConfig
from evaluators.metrics.custom import CustomMetrics, yaml_problem
from evaluators.metrics.registry import check_custom, check_known, create_metric


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAGPULSE_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    otlp: OtlpConfig = Field(default_factory=OtlpConfig)
    kafka: KafkaConfig = Field(default_factory=KafkaConfig)
    assembly: AssemblyConfig = Field(default_factory=AssemblyConfig)
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    labels: LabelsConfig = Field(default_factory=LabelsConfig)
    otel_export: OtelExportConfig = Field(default_factory=OtelExportConfig)
    results: KafkaResultsConfig = Field(default_factory=KafkaResultsConfig)
    phoenix: PhoenixConfig = Field(default_factory=PhoenixConfig)
    verdicts: VerdictLimits = Field(default_factory=VerdictLimits)
    page: PageConfig = Field(default_factory=PageConfig)
    feedback: FeedbackConfig = Field(default_factory=FeedbackConfig)
    review: ReviewConfig = Field(default_factory=ReviewConfig)
    canary: CanaryConfig = Field(default_factory=CanaryConfig)
    custom_metrics: CustomMetrics = Field(
        default_factory=dict,
        description="Named custom criteria (kind geval or aspect), usable in sampling.metrics like built-in "
        "metrics; see evaluators/metrics/custom.py.",
    )
    hide_texts: bool = Field(
        False,
        description="Evaluation spans, the results topic and the page keep scores, verdicts and ids, never "
        "the question, answer, passages, claims or reasons: for answers that hold personal data.",
    )
    metrics_host: str = "127.0.0.1"
    metrics_port: int = Field(9464, ge=0, le=65535, description="/metrics, /healthz, /readyz.")
    log_records: bool = Field(False, description="Log one structured line per extracted RagRecord.")
    summary_interval_s: float = Field(
        30.0, ge=0, description="`ragpulse run` logs a one-line summary this often; 0 (or --quiet) = never."
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings)

    @model_validator(mode="after")
    def _metrics_exist(self) -> Settings:
        """A misspelt metric name fails here, at load, not as an error on every evaluation later."""
        check_custom(self.custom_metrics)
        sampling = self.sampling
        for where, names in (
            ("sampling.metrics", sampling.metrics),
            ("sampling.reference_metrics", sampling.reference_metrics),
            ("sampling.metric_rates", sampling.metric_rates),
            ("metrics.options", self.metrics.options),
            ("canary.metrics", self.canary.metrics),
        ):
            try:
                check_known(names, self.custom_metrics)
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
        for name, options in self.metrics.options.items():
            try:
                create_metric(name, custom=self.custom_metrics, **options)
            except TypeError as error:  # an option the metric's constructor does not take
                unknown = str(error).rpartition("argument ")[2]
                raise ValueError(f"metrics.options.{name}: unknown option {unknown}") from None
            except ValueError as error:
                raise ValueError(f"metrics.options.{name}: {error}") from None
        return self

    def with_values(self, **dotted: Any) -> Settings:
        """A copy with `dotted` fields replaced, e.g. `with_values(**{"kafka.bootstrap_servers": None})`."""
        return Settings.model_validate(_merge(self.model_dump(), _nest(dotted)))


def load_settings(yaml_file: Path | None = None, **flags: Any) -> Settings:
    """Settings from flags (None values ignored; dotted keys set nested fields), environment, YAML
    and defaults, in that order of precedence."""
    from_yaml = _read_yaml(yaml_file) if yaml_file is not None else {}
    from_env = EnvSettingsSource(Settings)()
    from_flags = _nest({k: v for k, v in flags.items() if v is not None})
    return Settings.model_validate(_merge(_merge(from_yaml, from_env), from_flags))


def _read_yaml(path: Path) -> dict[str, Any]:
    """The file's top-level mapping; a missing file or broken YAML is one line, not a traceback."""
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: {yaml_problem(error)}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections (otlp:, kafka:, ...)")
    return document


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    """{'kafka.topic': 't'} -> {'kafka': {'topic': 't'}} for flags that set nested fields."""
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        target = nested
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return nested


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`, merging nested mappings (a YAML section and one env var in it)."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged
