"""What users configure about judging: which judge, and per-metric options."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from collector.judging.outbound import OutboundConfig


class JudgeConfig(BaseModel):
    """No `base_url` = the offline judge. Any OpenAI-compatible endpoint otherwise."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = Field(None, description="Prefer RAGPULSE_JUDGE__API_KEY or OPENAI_API_KEY.")
    api_key_file: Path | None = Field(None, description="A file holding the key (e.g. a mounted Secret).")
    timeout_s: float = Field(30.0, gt=0)
    max_retries: int = Field(3, ge=0)
    cascade: bool = Field(False, description="Offline judge first, the LLM judge only on doubt.")
    cascade_band: tuple[float, float] = Field(
        (0.25, 0.75),
        description="Escalate a faithfulness/hallucination result when a verdict's calibrated probability"
        " (or, without one, the score) lies in this band.",
    )
    prices_per_million: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="model -> (prompt, completion) USD per million tokens."
    )
    outbound: OutboundConfig = Field(
        default_factory=OutboundConfig,
        description="What an external (LLM) judge may see: personal data masked, passages bounded.",
    )
    offline_processes: int | None = Field(
        None,
        ge=0,
        description="Worker processes of the offline judge (CPU-bound): unset = min(evaluation.workers, "
        "CPUs available, a container's CPU limit included); 0 = on the event loop, in-process (smallest "
        "footprint, no parallelism).",
    )

    def resolved_api_key(self) -> str | None:
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        if self.api_key_file is not None:
            return self.api_key_file.read_text().strip()
        return os.environ.get("OPENAI_API_KEY")

    def offline_process_count(self, workers: int) -> int:
        if self.offline_processes is not None:
            return self.offline_processes
        return max(1, min(workers, available_cpus()))


def available_cpus() -> int:
    """CPUs this process may use: its affinity, capped by a cgroup CPU quota (a container's limit),
    which `os.cpu_count()` ignores: on a 64-core node, a pod limited to 2 CPUs has 2."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    for path, parse in ((_CGROUP_V2, _quota_v2), (_CGROUP_V1, _quota_v1)):
        try:
            quota = parse(path)
        except (OSError, ValueError):
            continue
        if quota is not None:
            return max(1, min(cpus, math.ceil(quota)))
    return max(1, cpus)


_CGROUP_V2 = Path("/sys/fs/cgroup/cpu.max")
_CGROUP_V1 = Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")


def _quota_v2(path: Path) -> float | None:
    quota, period = path.read_text().split()[:2]  # "max 100000" = no limit
    return None if quota == "max" else int(quota) / int(period)


def _quota_v1(path: Path) -> float | None:
    quota = int(path.read_text())
    period = int((path.parent / "cpu.cfs_period_us").read_text())
    return None if quota <= 0 else quota / period


class MetricsConfig(BaseModel):
    """Per-metric constructor options (the `metrics:` section)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-metric options, e.g. faithfulness: {threshold: 0.7}."
    )
