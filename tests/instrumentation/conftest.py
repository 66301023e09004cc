"""Fixtures of the instrumentation conformance suite: the instrumentation venv and the scripted LLM."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from tests.instrumentation.capture import instrumentation_python
from tests.instrumentation.llm_server import ScriptedLLMServer


def _venv(name: str = "") -> str:
    """The python of a cached instrumentation venv, built on first use (about a minute cold).

    Only RAGPULSE_SKIP_INSTRUMENTATION=1 skips: a venv that fails to build is an error of the suite,
    never a silent skip.
    """
    if os.environ.get("RAGPULSE_SKIP_INSTRUMENTATION") == "1":
        pytest.skip("RAGPULSE_SKIP_INSTRUMENTATION=1: instrumentation conformance tests skipped")
    try:
        return instrumentation_python(name)
    except subprocess.CalledProcessError as error:
        raise RuntimeError(
            f"scripts/instrumentation-venv.sh {name} failed (exit {error.returncode}); see its stderr above"
        ) from error


@pytest.fixture(scope="session")
def instrumentation_venv() -> str:
    """The RAG frameworks' venv (requirements.txt)."""
    return _venv()


@pytest.fixture(scope="session")
def agents_venv() -> str:
    """The agent frameworks' venv (requirements-agents.txt: Pydantic AI, LangGraph, DSPy)."""
    return _venv("agents")


@pytest.fixture(scope="session")
def openlit_venv() -> str:
    """OpenLIT's venv (requirements-openlit.txt)."""
    return _venv("openlit")


@pytest.fixture(scope="session")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server
