"""Fine-tune the grounding cross-encoder, and export it to ONNX (int8) for onnxruntime.

Training only (the `train` extra: torch, transformers, onnx); the judge runs the exported file with
onnxruntime and tokenizers. Three outputs: supported, unsupported (not stated), contradicted. A set
that only says "not supported" trains P(unsupported) + P(contradicted).
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import AutoTokenizer, BertForSequenceClassification

from scripts.grounding.pairs import Pair

CLASSES = ("supported", "unsupported", "contradicted")
MAX_LEN = 256
_TARGET = {"supported": 0, "unsupported": 1, "contradicted": 2, "not_supported": 3}


def load_base(path: Path) -> tuple[BertForSequenceClassification, AutoTokenizer]:
    transformers.logging.set_verbosity_error()  # (its load report lists the new head as 'missing')
    model = BertForSequenceClassification.from_pretrained(path, num_labels=len(CLASSES))
    tokenizer = AutoTokenizer.from_pretrained(path)
    return model, tokenizer


def _loss(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    lp = torch.log_softmax(logits, dim=-1)
    own = lp.gather(1, targets.clamp(max=2).unsqueeze(1)).squeeze(1)
    either = torch.logsumexp(lp[:, 1:], dim=-1)
    nll = -torch.where(targets == 3, either, own)
    return (nll * weights).sum() / weights.sum()


def balanced_weights(pairs: Sequence[Pair]) -> np.ndarray:
    """Within each group, supported and not supported weigh the same (so no set's base rate becomes
    the model's prior); a group weighs as many pairs as it brings."""
    counts = Counter((p.group, p.label == "supported") for p in pairs)
    sizes = Counter(p.group for p in pairs)
    return np.array([sizes[p.group] / (2 * counts[(p.group, p.label == "supported")]) for p in pairs])


def _batches(pairs: Sequence[Pair], tokenizer, batch: int, rng: random.Random):  # type: ignore[no-untyped-def]
    """Length-bucketed batches (little padding: the CPU cost of a batch is its longest pair)."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    chunks = [order[i : i + batch * 50] for i in range(0, len(order), batch * 50)]
    out = []
    for chunk in chunks:
        lengths = {i: len(pairs[i].premise) + len(pairs[i].hypothesis) for i in chunk}
        chunk.sort(key=lengths.__getitem__)
        out += [chunk[i : i + batch] for i in range(0, len(chunk), batch)]
    rng.shuffle(out)
    return out


def encode(tokenizer, premises: Sequence[str], hypotheses: Sequence[str], max_len: int = MAX_LEN):  # type: ignore[no-untyped-def]
    return tokenizer(
        list(premises),
        list(hypotheses),
        truncation="only_first",
        max_length=max_len,
        padding=True,
        return_tensors="pt",
    )


def train(
    pairs: Sequence[Pair],
    base: Path,
    *,
    epochs: float = 1.0,
    lr: float = 6e-5,
    batch: int = 16,
    seed: int = 13,
    threads: int = 2,
    log_every: int = 200,
) -> tuple[BertForSequenceClassification, AutoTokenizer]:
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    rng = random.Random(seed)
    model, tokenizer = load_base(base)
    model.train()
    weights = torch.tensor(balanced_weights(pairs), dtype=torch.float32)
    targets = torch.tensor([_TARGET[p.label] for p in pairs])
    plan = []
    for _ in range(math.ceil(epochs)):
        plan += _batches(pairs, tokenizer, batch, rng)
    plan = plan[: int(len(plan) * epochs / math.ceil(epochs))]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, len(plan) // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (len(plan) - step) / (len(plan) - warmup)))
    )
    started, running = time.perf_counter(), 0.0
    for step, idx in enumerate(plan):
        enc = encode(tokenizer, [pairs[i].premise for i in idx], [pairs[i].hypothesis for i in idx])
        logits = model(**enc).logits
        loss = _loss(logits, targets[idx], weights[idx])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        running = 0.98 * running + 0.02 * loss.item() if step else loss.item()
        if log_every and (step + 1) % log_every == 0:
            rate = (step + 1) * batch / (time.perf_counter() - started)
            print(f"  step {step + 1}/{len(plan)} loss {running:.3f} ({rate:.1f} pairs/s)", flush=True)
    model.eval()
    return model, tokenizer


@torch.no_grad()
def predict_logits(
    model, tokenizer, premises: Sequence[str], hypotheses: Sequence[str], batch: int = 64
) -> np.ndarray:  # type: ignore[no-untyped-def]
    order = sorted(range(len(premises)), key=lambda i: len(premises[i]) + len(hypotheses[i]))
    out = np.zeros((len(premises), len(CLASSES)), dtype=np.float32)
    for start in range(0, len(order), batch):
        idx = order[start : start + batch]
        enc = encode(tokenizer, [premises[i] for i in idx], [hypotheses[i] for i in idx])
        out[idx] = model(**enc).logits.numpy()
    return out


def fit_temperature(logits: np.ndarray, supported: np.ndarray) -> float:
    """The temperature that makes P(supported) calibrated on held-out pairs (log-loss, grid search)."""
    best, best_t = math.inf, 1.0
    for t in np.exp(np.linspace(math.log(0.3), math.log(5.0), 80)):
        p = _softmax(logits / t)[:, 0].clip(1e-6, 1 - 1e-6)
        nll = -np.mean(supported * np.log(p) + (1 - supported) * np.log(1 - p))
        if nll < best:
            best, best_t = nll, float(t)
    return best_t


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def export_onnx(model, tokenizer, out_dir: Path, *, quantize: bool = True) -> Path:  # type: ignore[no-untyped-def]
    """`model.onnx` (int8 weights when `quantize`) and `tokenizer.json` in `out_dir`."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_dir.mkdir(parents=True, exist_ok=True)
    enc = encode(tokenizer, ["a premise"], ["a claim"])
    fp32 = out_dir / "model.fp32.onnx"
    torch.onnx.export(
        model,
        (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]),
        fp32,
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={
            k: {0: "batch", 1: "tokens"} for k in ("input_ids", "attention_mask", "token_type_ids")
        },
        opset_version=17,
        dynamo=False,
    )
    final = out_dir / "model.onnx"
    if quantize:
        logging.getLogger().setLevel(logging.ERROR)  # (its advice to pre-process applies to vision models)
        quantize_dynamic(fp32, final, weight_type=QuantType.QInt8)
        fp32.unlink()
    else:
        fp32.rename(final)
    tokenizer.backend_tokenizer.save(str(out_dir / "tokenizer.json"))
    return final
