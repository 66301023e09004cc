"""What a user installs: the sdist carries the sources, never what the test setup built or downloaded.

The wheel, as the image builds it, and what it ships are checked in tests/ops/test_image.py."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_sdist_excludes_build_outputs(tmp_path: Path) -> None:
    (REPO / "deploy" / "tools" / "bin").mkdir(parents=True, exist_ok=True)  # as after `make test`
    result = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    (sdist,) = tmp_path.glob("ragpulse-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = archive.getmembers()
    names = [m.name for m in members]
    assert not [n for n in names if "/deploy/tools/bin/" in n or "node_modules" in n or "/.venv/" in n]
    # Nothing large but the learned grounding model's weights, which ship on purpose (at most ~30 MB).
    model = [m for m in members if m.name.endswith("evaluators/offline/data/grounding/model.onnx")]
    assert len(model) == 1 and model[0].size < 30 * 1024 * 1024
    rest = [m for m in members if m not in model]
    assert max(m.size for m in rest) < 5 * 1024 * 1024, max(rest, key=lambda m: m.size).name
    assert any(n.endswith("collector/pipeline/pipeline.py") for n in names)
    assert [n for n in names if n.count("/") == 1 and n.endswith("/LICENSE")], "the sdist lacks LICENSE"
