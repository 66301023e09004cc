"""Which judge `ragpulse eval` and `assert_rag` use, chosen the way `ragpulse run` chooses it.

An LLM judge when an endpoint or a key is configured (a base URL: `--base-url` or OPENAI_BASE_URL; or a
key in the variable named by `--api-key-env`), otherwise the offline judge, so a fresh checkout or a CI
job without secrets still gets scores instead of a table of errors. The choice is said in one line.

`ragpulse eval --config ragpulse.yaml` instead takes the sidecar's own judge: the collector reads the
file with its settings code and builds the judge with the function `ragpulse run` builds it with, then
hands it here as a `SidecarJudging` (this package never imports the collector), so a production failure
re-judged in CI meets the same judge, criteria and thresholds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from evaluators.case import TestCase
from evaluators.judges.base import Judge
from evaluators.metrics.custom import CustomMetrics
from evaluators.redaction import without_credentials

JudgeKind = Literal["openai", "offline", "offline-learned"]
OPENAI_API = "https://api.openai.com/v1"


class JudgeChoiceError(ValueError):
    """The forced judge cannot work (OpenAI's API with no key): one line, raised before any call."""


@dataclass(frozen=True, slots=True)
class JudgeChoice:
    kind: JudgeKind
    why: str
    model: str = "gpt-4o-mini"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"

    def describe(self) -> str:
        if self.kind != "openai":
            return f"judge: {self.kind} ({self.why})"
        url = without_credentials(self.base_url or OPENAI_API)  # a URL's user:pass is never printed
        return f"judge: openai {self.model} at {url} ({self.why})"


@dataclass(frozen=True)
class SidecarJudging:
    """How the sidecar's config file judges: its judge (built as `ragpulse run` builds it), a line saying
    which, its custom criteria and per-metric options, what its judge may see of a case
    (`judge.outbound`: personal data masked, texts bounded) when the judge is an external one, and the
    metrics it samples (`sampling.metrics` and `reference_metrics`)."""

    judge: Judge | None  # None: no judge was asked for (a flag chooses it), or none can be built here
    description: str
    custom: CustomMetrics = field(default_factory=dict)
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    outbound: Callable[[TestCase], TestCase] | None = None
    metrics: tuple[str, ...] = ()


# Reads a sidecar config file, building its judge only when asked (`--judge`/`--base-url` choose
# another); the collector's `ragpulse eval` passes one. Raises ValueError with a one-line message.
SidecarReader = Callable[[Path, bool], SidecarJudging]


def choose_judge(
    forced: JudgeKind | None = None,
    *,
    model: str = "gpt-4o-mini",
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    environ: Mapping[str, str] | None = None,
) -> JudgeChoice:
    """The judge to use and why. `forced` ("openai" / "offline") wins; raises JudgeChoiceError when
    "openai" is forced with neither a key nor a base URL (OpenAI's API would refuse every call)."""
    env = os.environ if environ is None else environ
    url = base_url or env.get("OPENAI_BASE_URL") or None
    has_key = bool(env.get(api_key_env))
    llm = JudgeChoice("openai", "", model, url, api_key_env)
    if forced in ("offline", "offline-learned"):
        return JudgeChoice(forced, f"--judge {forced}")
    if forced == "openai":
        if not url and not has_key:
            raise JudgeChoiceError(
                f"--judge openai needs an API key in ${api_key_env} (or --base-url for a local server)"
            )
        return replace(llm, why="--judge openai")
    if url:
        return replace(llm, why="--base-url" if base_url else "OPENAI_BASE_URL is set")
    if has_key:
        return replace(llm, why=f"{api_key_env} is set")
    return JudgeChoice("offline", f"no --base-url, OPENAI_BASE_URL or {api_key_env}")


def make_judge(
    choice: JudgeChoice, *, timeout_s: float = 30.0, embedding_model: str = "text-embedding-3-small"
) -> Judge:
    if choice.kind == "offline":
        from evaluators.offline import OfflineJudge  # lazy: the offline model is heavy and optional

        return OfflineJudge()
    if choice.kind == "offline-learned":
        from evaluators.offline import LearnedJudge

        return LearnedJudge()
    from evaluators.judges.openai_judge import OpenAIJudge

    return OpenAIJudge(
        choice.model,
        base_url=choice.base_url,
        api_key_env=choice.api_key_env,
        timeout_s=timeout_s,
        embedding_model=embedding_model,
    )
