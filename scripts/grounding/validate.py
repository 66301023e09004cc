"""Leave-one-group-out validation: train on every group of sets but one, measure on the one left out.

    python -m scripts.grounding.validate --data DIR --base DIR [--leave-out summaries factcheck ...]

Model choices are made on these figures, never on a random split of the training mix: a model that
only learnt the style of its training sets scores well there and at chance on a set it never saw.
Per left-out set it prints the AUROC and the balanced accuracy of the verdict (the threshold comes
from the training groups' own held-out slice), beside the word-overlap baseline (threshold fitted on
one half of the left-out set, measured on the other) and the answer-only score (the context blanked:
a model that separates without it has learnt a shortcut). Predictions go to `--out` for analysis.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evaluators.offline.claims import claims_with_questions
from evaluators.offline.idf import default_idf
from evaluators.offline.premise import hypothesis, premise
from scripts.grounding import train as trainer
from scripts.grounding.metrics import (
    auroc,
    balanced_accuracy,
    baseline_split_half,
    best_threshold,
    ece,
    overlap,
)
from scripts.grounding.pairs import Pair, pairs_of, synthetic_examples
from scripts.grounding.sources import Example, load

CAPS = {  # examples per source (CPU time); the sources not named are used whole
    "mnli": 8000,
    "snli": 4000,
    "cad": 4000,
    "conjnli": 3000,
    "sick": 3000,
    "med": 1500,
    "monli": 1000,
    "breaking_nli": 1500,
    "scitail": 2000,
    "mrpc": 2500,
    "stsb": 1500,
    "halueval_qa": 1500,
    "halueval_dialogue": 1500,
    "halueval_summarization": 800,
    "synthetic": 6000,
}


def training_pairs(examples: Sequence[Example], seed: int, caps: dict[str, int]) -> list[Pair]:
    rng = random.Random(seed)
    by_source: dict[str, list[Example]] = defaultdict(list)
    for ex in examples:
        by_source[ex.source if ex.group != "synthetic" else "synthetic"].append(ex)
    out: list[Pair] = []
    for source, items in sorted(by_source.items()):
        rng.shuffle(items)
        made = pairs_of(items[: caps.get(source, len(items))], evidence_removed=0.3, seed=seed)
        out += made[: caps.get(source, len(made)) * 2]
    return out


def claim_scores(
    score,
    ex: Example,
    idf,
    *,
    blank: bool = False,  # type: ignore[no-untyped-def]
) -> list[tuple[str, str]]:
    """(premise, hypothesis) of every claim of the example, as the judge would ask them."""
    claims = [c for c, _ in claims_with_questions(ex.claim, ex.question)] if ex.answer_level else [ex.claim]
    claims = claims or [ex.claim]
    return [
        ("" if blank else premise(c, ex.passages, idf=idf).text, hypothesis(c, ex.question)) for c in claims
    ]


def evaluate(model, tokenizer, examples: Sequence[Example], temperature: float) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """P(supported) per example (the weakest claim's, for a whole answer), with and without context."""
    idf = default_idf()
    out = {}
    for blank in (False, True):
        asked = [claim_scores(None, ex, idf, blank=blank) for ex in examples]
        flat = [q for qs in asked for q in qs]
        logits = trainer.predict_logits(model, tokenizer, [p for p, _ in flat], [h for _, h in flat])
        p = trainer._softmax(logits / temperature)
        scores, at = [], 0
        for qs in asked:
            scores.append(p[at : at + len(qs), 0].min())
            at += len(qs)
        out["answer_only" if blank else "p"] = np.array(scores)
    return out


def report(
    name: str, ex: Sequence[Example], preds: dict[str, np.ndarray], threshold: float
) -> dict[str, float]:
    y = np.array([e.supported for e in ex])
    if len(set(y)) < 2:
        return {}
    p, blank = preds["p"], preds["answer_only"]
    base = np.array([overlap(e) for e in ex])
    row = {
        "n": len(ex),
        "auroc": auroc(y, p),
        "bal_acc": balanced_accuracy(y, (p >= threshold).astype(int)),
        "ece": ece(y, p),
        "answer_only_auroc": auroc(y, blank),
        "overlap_auroc": auroc(y, base),
        "overlap_bal_acc": baseline_split_half(base, y),
    }
    print(
        f"  {name:24s} "
        + " ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items())
    )
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument(
        "--leave-out",
        nargs="+",
        default=["nli", "paraphrase", "factcheck", "lfqa", "summaries", "halueval", "synthetic"],
    )
    ap.add_argument("--synthetic", type=int, default=12000)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=6e-5)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=Path("/tmp/loso"))
    ap.add_argument("--record", action="store_true", help=f"write the figures into {RECORD.name}")
    args = ap.parse_args()
    examples = load(args.data) + synthetic_examples(args.synthetic)
    args.out.mkdir(parents=True, exist_ok=True)
    for group in args.leave_out:
        left_out = set(group.split("+"))
        train_ex = [e for e in examples if e.group not in left_out]
        test_ex = [e for e in examples if e.group in left_out]
        calib_ex = [e for e in train_ex if e.fold(20) == 0]
        fit_ex = [e for e in train_ex if e.fold(20) != 0]
        pairs = training_pairs(fit_ex, args.seed, CAPS)
        print(f"leave out {group}: {len(pairs)} training pairs, {len(test_ex)} test examples", flush=True)
        model, tokenizer = trainer.train(pairs, args.base, epochs=args.epochs, lr=args.lr, seed=args.seed)
        model.save_pretrained(args.out / group)
        tokenizer.save_pretrained(args.out / group)
        calib = random.Random(0).sample(calib_ex, min(3000, len(calib_ex)))
        calib_logits = evaluate_logits(model, tokenizer, calib)
        y_cal = np.array([e.supported for e in calib])
        temperature = trainer.fit_temperature(calib_logits, y_cal)
        p_cal = trainer._softmax(calib_logits / temperature)[:, 0]
        threshold, _ = best_threshold(p_cal, y_cal)
        print(f"  temperature {temperature:.2f}, threshold {threshold:.3f} (calibration slice {len(calib)})")
        rows = {}
        by_source: dict[str, list[Example]] = defaultdict(list)
        for e in test_ex:
            by_source[e.source].append(e)
        with (args.out / f"{group}.jsonl").open("w") as fh:
            for source, items in sorted(by_source.items()):
                items = random.Random(1).sample(items, min(2000, len(items)))
                preds = evaluate(model, tokenizer, items, temperature)
                rows[source] = report(source, items, preds, threshold)
                for e, p, b in zip(items, preds["p"], preds["answer_only"], strict=True):
                    fh.write(json.dumps({"source": source, "item": e.item, "label": e.label, "p": float(p),
                                         "answer_only": float(b), "overlap": overlap(e)}) + "\n")  # fmt: skip
        summary = {"temperature": temperature, "threshold": threshold, "pairs": len(pairs), "sets": rows}
        (args.out / f"{group}.summary.json").write_text(json.dumps(summary, indent=1))
        if args.record:
            record(group, summary, args)


RECORD = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "grounding_loso.json"


def record(group: str, summary: dict, args: argparse.Namespace) -> None:  # type: ignore[type-arg]
    """Keep a left-out group's figures for `benchmarks/judge_accuracy.py` (merged with the others)."""
    recorded = json.loads(RECORD.read_text()) if RECORD.is_file() else {"groups": {}}
    recorded["note"] = (
        f"MiniLM cross-encoder trained on every other group, epochs {args.epochs}, lr {args.lr}, "
        f"seed {args.seed}, synthetic {args.synthetic}; python -m scripts.grounding.validate --record"
    )
    recorded["groups"][group] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in summary.items()}
    for row in recorded["groups"][group]["sets"].values():
        row.update({k: round(v, 4) for k, v in row.items() if isinstance(v, float)})
    RECORD.write_text(json.dumps(recorded, indent=1) + "\n")


def evaluate_logits(model, tokenizer, examples: Sequence[Example]) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Logits of the weakest claim of each example (for calibration on the training groups)."""
    idf = default_idf()
    asked = [claim_scores(None, ex, idf) for ex in examples]
    flat = [q for qs in asked for q in qs]
    logits = trainer.predict_logits(model, tokenizer, [p for p, _ in flat], [h for _, h in flat])
    out, at = [], 0
    for qs in asked:
        chunk = logits[at : at + len(qs)]
        out.append(chunk[np.argmin(trainer._softmax(chunk)[:, 0])])
        at += len(qs)
    return np.array(out)


if __name__ == "__main__":
    main()
