"""How stored data reads on the page: claims marked in the answer, verdict words, times, links.

Kept apart from the templates so the rules (which claims to show, where each sits in the answer)
are plain functions with tests; the templates only lay out what these return. Texts stay plain
strings here: Jinja escapes every one of them when it renders (answers are untrusted input).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote, urlencode

# verdict -> (css class, the word shown): the colour never carries the meaning alone.
_VERDICTS = {
    "supported": ("ok", "✓ supported"),
    "not_found": ("warn", "? not found"),
    "contradicted": ("bad", "✗ contradicted"),
    "relevant": ("ok", "relevant"),
    "irrelevant": ("bad", "irrelevant"),
    "partly_relevant": ("warn", "partly relevant"),
    "useful": ("ok", "useful"),
    "not_useful": ("warn", "not useful"),
}
_OUTCOMES = {"passed": "ok", "failed": "bad", "error": "warn", "unmeasured": "muted"}
_CLAIM_METRICS = ("faithfulness", "factual_correctness", "answer_correctness")


def verdict_class(verdict: str | None) -> str:
    return _VERDICTS.get(verdict or "", ("muted", ""))[0]


def verdict_word(verdict: str | None) -> str:
    return _VERDICTS.get(verdict or "", ("", (verdict or "").replace("_", " ")))[1]


def outcome_class(outcome: str | None) -> str:
    return _OUTCOMES.get(outcome or "", "muted")


def claims(evaluations: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The claims to mark in the answer, and the metric they come from (faithfulness first)."""
    ranked = sorted(
        evaluations,
        key=lambda e: _CLAIM_METRICS.index(e["metric"]) if e["metric"] in _CLAIM_METRICS else 99,
    )
    for evaluation in ranked:
        found = [v for v in evaluation["verdicts"] if v.get("kind") == "claim"]
        if found:
            return evaluation["metric"], found
    return "", []


def mark_claims(answer: str, claim_list: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer cut into segments, each claim found verbatim in it tagged with its number and
    verdict; a judge that rephrased a claim leaves the text unmarked (the claim list still shows it)."""
    spans: list[tuple[int, int, int]] = []
    for number, claim in enumerate(claim_list, 1):
        item = (claim.get("item") or "").strip().rstrip(".!?").strip()
        if len(item) < 3:
            continue
        start = answer.find(item)
        if start < 0:
            start = answer.lower().find(item.lower())
        if start < 0 or any(start < end and start + len(item) > begin for begin, end, _ in spans):
            continue
        spans.append((start, start + len(item), number))
    segments: list[dict[str, Any]] = []
    cursor = 0
    for begin, end, number in sorted(spans):
        if begin > cursor:
            segments.append({"text": answer[cursor:begin], "claim": None})
        verdict = claim_list[number - 1].get("verdict")
        segments.append({"text": answer[begin:end], "claim": number, "verdict": verdict})
        cursor = end
    if cursor < len(answer):
        segments.append({"text": answer[cursor:], "claim": None})
    return segments


def trace_link(template: str | None, trace_id: str, span_id: str) -> str | None:
    """The trace in the user's tracing backend, from `page.trace_url`; None when unset."""
    if not template:
        return None
    return template.replace("{trace_id}", quote(trace_id, safe="")).replace(
        "{span_id}", quote(span_id, safe="")
    )


def evaluations_url(**params: object) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "", False)}
    return "/evaluations" + (f"?{urlencode(kept)}" if kept else "")


def detail_url(trace_id: str, span_id: str) -> str:
    return f"/evaluations/{quote(trace_id, safe='')}/{quote(span_id, safe='')}"


def trace_url(trace_id: str) -> str:
    """The page's own view of a trace (what ragpulse read from it)."""
    return f"/traces/{quote(trace_id, safe='')}"


def conversation_url(conversation_id: str) -> str:
    return f"/conversations/{quote(conversation_id, safe='')}"


def ago(unix_s: float | None, now: float | None = None) -> str:
    if unix_s is None:
        return "never"
    seconds = max(0, int((now or time.time()) - unix_s))
    if seconds < 90:
        return f"{seconds} s ago"
    if seconds < 5400:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"


def clock(unix_s: float | None) -> str:
    return "" if unix_s is None else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(unix_s))


def score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return (
        f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s" if value < 90 else f"{value / 60:.0f} min"
    )


def usd(value: float | None) -> str:
    return "$0" if not value else f"${value:.4f}" if value < 1 else f"${value:,.2f}"


FILTERS = {
    "verdict_class": verdict_class,
    "verdict_word": verdict_word,
    "outcome_class": outcome_class,
    "ago": ago,
    "clock": clock,
    "score": score,
    "share": share,
    "usd": usd,
    "seconds": seconds,
}
