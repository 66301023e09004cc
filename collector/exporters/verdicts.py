"""The verdicts behind a score, as the JSON every consumer sees: the results topic, evaluation spans
and events, and the page's store all carry this one shape, bounded the same way.

    {"kind": "claim", "item": "The tower is 300 m tall.", "verdict": "contradicted",
     "passages": [0], "reason": "the context says 330", "confidence": 0.93}

`verdict` is the label a person reads (supported / not_found / contradicted for a claim, relevant /
irrelevant for a statement, useful / not_useful for a passage, ...); `passages` are 0-based indexes into
the record's retrieved passages: the ones that decide the verdict (the supporting or contradicting
passage of a claim), or the one the item is (a passage's own verdict) or came from (a statement).
`confidence` is the judge's calibrated probability of its verdict, where it gives one (the offline
judge does, an LLM judge does not).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from collector.metrics import VERDICTS_TRUNCATED
from evaluators import VerdictRecord
from evaluators.result import verdict_passages


class VerdictLimits(BaseModel):
    """How much of the verdicts travels with a score (beyond it they are cut and counted)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_items: int = Field(50, ge=0, description="Verdicts per evaluation; the rest are counted, not sent.")
    max_item_chars: int = Field(300, ge=0, description="Longer claims and statements are cut.")
    max_reason_chars: int = Field(200, ge=0, description="Longer verdict reasons are cut.")


def json_number(value: Any) -> float | None:
    """A number read back from a JSON document (a result, a verdict, a correction): finite, and never
    a bool (JSON's true is no score)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def verdict_documents(
    verdicts: Sequence[VerdictRecord], limits: VerdictLimits, exporter: str, hide_texts: bool = False
) -> tuple[list[dict[str, Any]], int]:
    """The JSON-ready verdicts and how many were left out; cuts are counted per exporter.

    `hide_texts`: items and reasons are left out (they quote the answer and the passages); verdicts and
    passage indexes remain."""
    kept = verdicts[: limits.max_items]
    documents: list[dict[str, Any]] = []
    for verdict, passages in zip(kept, verdict_passages(kept), strict=True):
        document: dict[str, Any] = {"kind": verdict.kind, "verdict": verdict.label, "passages": passages}
        if verdict.confidence is not None:  # the judge's calibrated P(its verdict): the review queue's doubt
            document["confidence"] = round(verdict.confidence, 3)
        if not hide_texts:
            document["item"] = verdict.item[: limits.max_item_chars]
            document["reason"] = verdict.reason[: limits.max_reason_chars]
        documents.append(document)
    left_out = max(0, len(verdicts) - limits.max_items)
    if left_out:
        VERDICTS_TRUNCATED.labels(exporter).inc(left_out)
    return documents, left_out
