"""Training the grounding model runs end to end on a tiny sample: pairs, fine-tuning, calibration,
ONNX export, and the exported model judging through `LearnedJudge`.

It runs in the cached training venv (torch and the base model's wheel, scripts/train-venv.sh), built by
scripts/setup.sh; the shipped model's training is hours of CPU and never runs here.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from testkit.venvs import ROOT, cached_python

pytestmark = pytest.mark.train

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from evaluators.judges.base import ExtractKind, VerdictTask
    from evaluators.offline import LearnedJudge
    from evaluators.offline.grounding_cases import load_cases
    from evaluators.offline.grounding_model import GroundingModel
    from scripts.grounding.build import base_model, build
    from scripts.grounding.sources import Example

    out = Path(sys.argv[1])
    labels = {"supported": "supported", "unsupported": "unsupported", "contradicted": "contradicted"}
    examples = []
    for name in ("grounding_cases.jsonl", "grounding_cases_more.jsonl"):
        for case in load_cases(Path("tests/data") / name):
            if case["expect"] in labels:
                examples.append(Example("hand", "hand", tuple(case["contexts"]), case["answer"],
                                        labels[case["expect"]], case["question"], item=case["id"]))
    meta = build(examples, out, base=base_model(), limit=32, calibration_size=40, calibration_share=3)
    judge = LearnedJudge(grounding=GroundingModel(out))
    claims = asyncio.run(judge.extract("Orders above 50 euros ship for free.", ExtractKind.CLAIMS))
    passages = ["Orders over 50 euros ship free."]
    [verdict] = asyncio.run(judge.verdicts(claims, passages, VerdictTask.SUPPORTED))
    print(json.dumps({"meta": meta, "verdict": verdict.verdict, "confidence": verdict.confidence}))
    """
)


def test_training_runs_end_to_end_on_a_tiny_sample(tmp_path: Path) -> None:
    python = cached_python("train-venv.sh", "about 4 min, 6 GB")
    done = subprocess.run(
        [python, "-c", SCRIPT, str(tmp_path / "model")],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    meta = result["meta"]
    assert meta["training"]["pairs"] == 32
    assert 0 < meta["thresholds"]["supported"] < 1 and meta["temperature"] > 0
    assert result["verdict"] in ("yes", "no", "idk") and 0 <= result["confidence"] <= 1
    written = {p.name for p in (tmp_path / "model").iterdir()}
    assert written == {"model.onnx", "tokenizer.json", "model.json"}
