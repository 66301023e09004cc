"""Paths and real-tool lookups shared by the ops tests (rules, dashboards, deployment files)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
GRAFANA = REPO / "grafana"
RULES_FILE = DEPLOY / "prometheus" / "rules" / "ragpulse.rules.yml"
RULE_TESTS_DIR = DEPLOY / "prometheus" / "tests"


def require_binary(name: str, install_hint: str) -> str:
    """Path of a real tool the test needs: skipped locally when absent, a failure in CI (missing install)."""
    path = shutil.which(name)
    if path:
        return path
    message = f"{name} not found: {install_hint}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def run(
    argv: list[str], *, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run a tool and return its result; the output is kept so an assertion can show it."""
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
