"""Refresh the captured OTLP fixtures: `python -m tests.instrumentation.capture [--out DIR] [COMBO ...]`.

Runs every conformance app (or the named `app-instrumentation` combinations) in the instrumentation
venv against the scripted LLM server, without a collector (`--endpoint none`), and writes
`traces.json`, `logs.json` and `expected.json` per combination into DIR (default
tests/data/instrumentation), the fixtures the extraction unit tests read.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from testkit import CAPTURES
from tests.instrumentation.llm_server import ScriptedLLMServer

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = CAPTURES

# (app, instrumentation): every combination the suite covers.
COMBINATIONS: tuple[tuple[str, str], ...] = (
    ("llamaindex", "openinference"),
    ("llamaindex", "openllmetry"),
    ("langchain", "openinference"),
    ("langchain", "openllmetry"),
    ("haystack", "openinference"),
    ("openai", "openinference"),
    ("openai", "openllmetry"),
    ("openai", "otel-genai-events"),
    ("openai", "otel-genai-span"),
)
# Multi-modal captures: their own tests (test_images.py), not the text conformance comparison.
IMAGE_COMBINATIONS: tuple[tuple[str, str], ...] = (("openai-images", "openinference"),)
# Answers citing their sources ([1], [2]): their own tests (test_citations.py).
CITATION_COMBINATIONS: tuple[tuple[str, str], ...] = (("llamaindex-citations", "openinference"),)
# One user's three turns in one session, as each instrumentation's docs set it: their own tests
# (test_conversations.py).
CONVERSATION_COMBINATIONS: tuple[tuple[str, str], ...] = (
    ("llamaindex-conversation", "openinference"),
    ("langchain-conversation", "openllmetry"),
    ("openai-conversation", "otel-genai-span"),
)

# Agents retrieving through a tool call, and DSPy's templated prompts: their own tests (test_agents.py).
AGENT_COMBINATIONS: tuple[tuple[str, str], ...] = (
    ("pydantic-ai", "builtin"),
    ("langgraph", "openinference"),
    ("llamaindex-agent", "openinference"),
    ("dspy", "openinference"),
)
# LLM calls through LiteLLM (OpenInference; its own `otel` callback) and OpenLIT (plain and streamed):
# one record per generation, the passages once (test_agents.py).
SDK_COMBINATIONS: tuple[tuple[str, str], ...] = (
    ("litellm", "openinference"),
    ("litellm", "builtin"),
    ("openai", "openlit"),
    ("openai-stream", "openlit"),
)
# Apps whose frameworks need the agents venv (requirements-agents.txt; Pydantic AI needs openai>=3).
AGENTS_VENV_APPS = frozenset({"pydantic-ai", "langgraph", "dspy", "litellm"})


def combination_name(app: str, instrumentation: str) -> str:
    return f"{app}-{instrumentation}"


def instrumentation_python(venv: str = "") -> str:
    """Build (or reuse) an instrumentation venv ("", `agents`, `openlit`) and return its python."""
    script = ROOT / "scripts" / "instrumentation-venv.sh"
    result = subprocess.run(
        ["bash", str(script), *([venv] if venv else [])],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
        timeout=1800,
    )
    return result.stdout.strip().splitlines()[-1]


def venv_of(app: str, instrumentation: str = "") -> str:
    """The venv a combination runs in: "openlit", "agents" or "" (the default instrumentation venv)."""
    if instrumentation == "openlit":  # OpenLIT pins its own OpenTelemetry (requirements-openlit.txt)
        return "openlit"
    return "agents" if app in AGENTS_VENV_APPS else ""


def app_command(python: str, app: str, instrumentation: str, llm_base_url: str, *extra: str) -> list[str]:
    return [
        python,
        "-m",
        "tests.instrumentation.apps",
        "--app",
        app,
        "--instrumentation",
        instrumentation,
        "--llm-base-url",
        llm_base_url,
        *extra,
    ]


def capture(
    python: str,
    combination: tuple[str, str],
    llm_base_url: str,
    out: Path,
    *extra: str,
    timeout: float = 300,
) -> None:
    """Run one app in the venv, exporting nowhere, and write its capture into `out` (one clear line of
    the app's stderr tail when it fails). `extra`: more app options, e.g. `--corpus FILE`."""
    command = app_command(
        python, *combination, llm_base_url, "--endpoint", "none", "--capture", str(out), *extra
    )
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise AssertionError(f"{combination_name(*combination)} failed: {result.stderr[-4000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=FIXTURES)
    parser.add_argument("combinations", nargs="*", help="e.g. langchain-openllmetry (default: all)")
    args = parser.parse_args()
    every = (
        COMBINATIONS
        + IMAGE_COMBINATIONS
        + CITATION_COMBINATIONS
        + CONVERSATION_COMBINATIONS
        + AGENT_COMBINATIONS
        + SDK_COMBINATIONS
    )
    chosen = [c for c in every if not args.combinations or combination_name(*c) in args.combinations]
    pythons = {venv: instrumentation_python(venv) for venv in {venv_of(*c) for c in chosen}}
    with ScriptedLLMServer() as llm:
        for combination in chosen:
            out = args.out / combination_name(*combination)
            capture(pythons[venv_of(*combination)], combination, llm.base_url, out)
            print(f"captured {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
