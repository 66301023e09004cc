"""Reviewers' claim verdicts as training examples for the grounding model.

A reviewer on the sidecar's page says what each claim of a faithfulness evaluation really is
(supported, contradicted, not stated); `ragpulse export-cases --corrected` writes those verdicts
into each case (`metadata.metrics[<metric>].human.claims`) beside the question and the passages.
Each marked claim becomes one `Example` against the case's retrieved passages, labelled as the
public sets are (`not_found` is the "not stated" label, `unsupported`), in the group `reviewed`, so
leave-one-group-out validation measures the model on the reviewers' labels too. One record's claims
share an item (its case id): they never straddle the calibration slice and the training pairs.
Cases exported without texts (`hide_texts`) have no passages to read and are skipped.

    ragpulse export-cases --store page.db --corrected --since 90d --out reviewed.jsonl
    python -m scripts.grounding.corrected reviewed.jsonl        # the examples it yields, by label

Training on them: `python -m scripts.grounding.build --data DIR --corrected reviewed.jsonl`
(repeatable) adds them to the public sets.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scripts.grounding.examples import Example

SOURCE = GROUP = "reviewed"
# The reviewer's verdict (collector.review.corrections.CLAIM_VERDICTS) -> the training label.
LABELS = {"supported": "supported", "not_found": "unsupported", "contradicted": "contradicted"}
# Metrics whose claims are judged against the retrieved passages (the grounding model's task); the
# claims of answer_correctness, say, are judged against the expected answer instead.
AGAINST_PASSAGES = frozenset({"faithfulness"})


def examples(path: Path, metrics: frozenset[str] = AGAINST_PASSAGES) -> Iterator[Example]:
    """The reviewers' claim verdicts in an exported corrected-cases JSONL file, one example each."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    case = json.loads(line)
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}: line {number}: invalid JSON: {error.msg}") from None
                yield from _case_examples(case, metrics)


def corrected_examples(paths: Iterable[Path]) -> list[Example]:
    """Every file's examples (the training scripts' optional `--corrected FILE`, repeatable)."""
    return [example for path in paths for example in examples(path)]


def _case_examples(case: dict[str, Any], metrics: frozenset[str]) -> Iterator[Example]:
    passages = tuple(text for text in case.get("retrieval_context") or () if text)
    if not passages:  # hide_texts (or no retrieval): nothing to ground a claim in
        return
    entries = (case.get("metadata") or {}).get("metrics") or {}
    for metric, entry in sorted(entries.items()):
        human = entry.get("human") if isinstance(entry, dict) and metric in metrics else None
        if not isinstance(human, dict):
            continue
        verdicts = entry.get("verdicts") or []
        for claim in human.get("claims") or ():
            label = LABELS.get(claim.get("verdict"))
            text = claim.get("claim") or _judged_item(verdicts, claim.get("index"))
            if label and text:
                yield Example(
                    SOURCE,
                    GROUP,
                    passages,
                    text,
                    label,
                    question=case.get("input") or "",
                    item=str(case.get("id") or text),
                )


def _judged_item(verdicts: list[Any], index: Any) -> str | None:
    """The claim's text as the judge's verdicts hold it: a correction that came without texts (from a
    replica with hide_texts) on a record whose texts this store kept."""
    if isinstance(index, int) and 0 <= index < len(verdicts) and isinstance(verdicts[index], dict):
        item = verdicts[index].get("item")
        return item if isinstance(item, str) and item else None
    return None


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="the training examples in corrected-cases JSONL files")
    parser.add_argument("files", type=Path, nargs="+")
    found = corrected_examples(parser.parse_args().files)
    counts = Counter(example.label for example in found)
    print(f"{len(found)} examples: " + ", ".join(f"{counts[label]} {label}" for label in LABELS.values()))
