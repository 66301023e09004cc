"""Configuration: one YAML file plus `RAGPULSE_*` environment variables (nested with `__`).

Precedence: command-line flags > environment > YAML file > defaults. Each component keeps its
config model beside its code; this module only composes them. Secrets (the judge API key) come
from the environment or a file and are `SecretStr`, so they never appear in logs or dumps.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from collector.assemble import AssemblyConfig
from collector.conventions import ExtractionConfig
from collector.exporters.kafka_results import KafkaResultsConfig
from collector.exporters.otel_spans import OtelExportConfig
from collector.pipeline import EvaluationConfig
from collector.receivers.kafka import KafkaConfig
from collector.sampling import SamplingConfig


class JudgeConfig(BaseModel):
    """No `base_url` = the offline judge. Any OpenAI-compatible endpoint otherwise."""

    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = Field(None, description="Prefer RAGPULSE_JUDGE__API_KEY or OPENAI_API_KEY.")
    api_key_file: Path | None = Field(None, description="A file holding the key (e.g. a mounted Secret).")
    timeout_s: float = Field(30.0, gt=0)
    max_retries: int = Field(3, ge=0)
    cascade: bool = Field(False, description="Offline judge first, the LLM judge only on doubt.")
    cascade_band: tuple[float, float] = Field(
        (0.25, 0.75), description="Offline scores in this band escalate."
    )
    prices_per_million: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="model -> (prompt, completion) USD per million tokens."
    )

    def resolved_api_key(self) -> str | None:
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        if self.api_key_file is not None:
            return self.api_key_file.read_text().strip()
        return os.environ.get("OPENAI_API_KEY")


class LabelsConfig(BaseModel):
    """Allow-lists for free-text Prometheus labels; empty = the first `max_values` seen."""

    services: list[str] = Field(default_factory=list)
    routes: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    max_values: int = Field(50, ge=1)


class MetricOptions(BaseModel):
    options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-metric options, e.g. faithfulness: {threshold: 0.7}."
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RAGPULSE_", env_nested_delimiter="__", extra="forbid")
    yaml_file: ClassVar[Path | None] = None

    otlp_host: str = "127.0.0.1"
    otlp_port: int = Field(4318, ge=0, le=65535, description="Embedded receiver, used when Kafka is not set.")
    otlp_grpc_port: int = Field(
        4317,
        ge=-1,
        le=65535,
        description="Embedded OTLP/gRPC receiver beside the HTTP one (Kafka not set); 0 = ephemeral, "
        "-1 = disabled.",
    )
    otlp_max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    metrics_host: str = "127.0.0.1"
    metrics_port: int = Field(9464, ge=0, le=65535, description="/metrics, /healthz, /readyz.")
    log_records: bool = Field(False, description="Log one structured line per extracted RagRecord.")
    summary_interval_s: float = Field(
        30.0, ge=0, description="`ragpulse run` logs a one-line summary this often; 0 (or --quiet) = never."
    )
    kafka: KafkaConfig = Field(default_factory=KafkaConfig)
    assembly: AssemblyConfig = Field(default_factory=AssemblyConfig)
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    labels: LabelsConfig = Field(default_factory=LabelsConfig)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    metrics: MetricOptions = Field(default_factory=MetricOptions)
    otel_export: OtelExportConfig = Field(default_factory=OtelExportConfig)
    results: KafkaResultsConfig = Field(default_factory=KafkaResultsConfig)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if cls.yaml_file is not None:
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=cls.yaml_file))
        return tuple(sources)


def load_settings(yaml_file: Path | None = None, **overrides: Any) -> Settings:
    """Settings from flags (`overrides`, None values ignored), environment, YAML and defaults."""
    if yaml_file is not None and not yaml_file.is_file():
        raise FileNotFoundError(f"config file not found: {yaml_file}")
    Settings.yaml_file = yaml_file
    try:
        return Settings(**_nest({k: v for k, v in overrides.items() if v is not None}))
    finally:
        Settings.yaml_file = None


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
