"""Fixtures of the instrumentation conformance suite: the instrumentation venv and the scripted LLM."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from tests.instrumentation.capture import instrumentation_python
from tests.instrumentation.llm_server import ScriptedLLMServer


@pytest.fixture(scope="session")
def instrumentation_venv() -> str:
    """The python of the cached instrumentation venv, built on first use (about a minute cold).

    Only RAGPULSE_SKIP_INSTRUMENTATION=1 skips: a venv that fails to build is an error of the suite,
    never a silent skip.
    """
    if os.environ.get("RAGPULSE_SKIP_INSTRUMENTATION") == "1":
        pytest.skip("RAGPULSE_SKIP_INSTRUMENTATION=1: instrumentation conformance tests skipped")
    try:
        return instrumentation_python()
    except subprocess.CalledProcessError as error:
        raise RuntimeError(
            f"scripts/instrumentation-venv.sh failed (exit {error.returncode}); see its stderr above"
        ) from error


@pytest.fixture(scope="session")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server
