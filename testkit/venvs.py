"""The cached venvs of third-party software (scripts/cached-venv.sh) that some tests run against."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def cached_python(script: str, build_note: str) -> str:
    """The python of the venv `scripts/<script>` builds: skipped locally when it was not built (it takes
    minutes), an error in CI, where scripts/setup.sh builds it."""
    check = subprocess.run(
        ["bash", str(ROOT / "scripts" / script), "--check"], capture_output=True, text=True
    )
    if check.returncode != 0:
        reason = f"the venv is not built: run `bash scripts/{script}` ({build_note})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; scripts/setup.sh builds it")
        pytest.skip(reason)
    return check.stdout.strip()
