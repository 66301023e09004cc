"""The grounding model: P(supported), P(not stated), P(contradicted) of a claim given a premise.

A MiniLM cross-encoder fine-tuned on public NLI, fact-checking and faithfulness sets
(`scripts/grounding/`, docs/grounding-model.md), exported to ONNX with int8 weights and run by
onnxruntime, its word pieces cut by `tokenizers`: no torch, no network. The files ship in the wheel
(`data/grounding/`); `model.json` beside them holds the temperature that calibrates the outputs and
the verdict thresholds chosen on held-out data.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

MODEL_DIR = Path(__file__).with_name("data") / "grounding"
SUPPORTED, UNSUPPORTED, CONTRADICTED = 0, 1, 2
_BATCH = 16


@dataclass(frozen=True, slots=True)
class Calibration:
    """What `model.json` records next to the weights."""

    name: str
    temperature: float
    supported: float  # P(supported) at or above which a claim is supported
    contradicted: float  # P(contradicted) at or above which a claim is contradicted
    max_tokens: int


class GroundingModel:
    """A cross-encoder over (premise, claim) pairs; one session, one thread (a worker is one core)."""

    def __init__(self, directory: Path = MODEL_DIR, *, threads: int = 1) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        meta = json.loads((directory / "model.json").read_text(encoding="utf-8"))
        self.calibration = Calibration(
            meta["name"], meta["temperature"], meta["thresholds"]["supported"],
            meta["thresholds"]["contradicted"], meta["max_tokens"],
        )  # fmt: skip
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.calibration.max_tokens, strategy="only_first")
        self.tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    @property
    def name(self) -> str:
        return self.calibration.name

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Calibrated (supported, unsupported, contradicted) probabilities, one row per (premise,
        claim) pair. Pairs are batched by length, so short claims do not pay for long ones."""
        out = np.zeros((len(pairs), 3), dtype=np.float64)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        for start in range(0, len(order), _BATCH):
            idx = order[start : start + _BATCH]
            out[idx] = self._run([pairs[i] for i in idx])
        return out

    def _run(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(pairs)
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        logits = self.session.run(None, feed)[0].astype(np.float64) / self.calibration.temperature
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)


@cache
def default_model() -> GroundingModel:
    """The packaged model, loaded once per process."""
    return GroundingModel()
