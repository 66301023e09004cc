"""Human-readable reasons for grounding verdicts: name the number, the entity, the passage."""

from __future__ import annotations

from evaluators.offline.features import Evidence

_SNIPPET = 90


def snippet(text: str, limit: int = _SNIPPET) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def supported_reason(ev: Evidence, probability: float) -> str:
    if ev.restates_question:
        return f"restates the question (P(supported)={probability:.2f})"
    if ev.best_window is None:
        return f"P(supported)={probability:.2f}"
    return (
        f'matches node {ev.best_window.node}: "{snippet(ev.best_window.text)}" '
        f"(P(supported)={probability:.2f})"
    )


def unsupported_reason(ev: Evidence, probability: float) -> str:
    """The most specific failure first: a number, then a name, then a negation, then rare words."""
    parts: list[str] = []
    if ev.missing_numbers:
        said = f" (the best passage says {', '.join(ev.window_numbers[:3])})" if ev.window_numbers else ""
        parts.append(f"number {', '.join(ev.missing_numbers[:3])} not in the context{said}")
    if ev.missing_entities:
        names = ", ".join(f"'{e}'" for e in ev.missing_entities[:3])
        noun = "entity" if len(ev.missing_entities) == 1 else "entities"
        parts.append(f"{noun} {names} not in the context")
    if ev.elsewhere_entities and ev.best_window is not None:
        names = ", ".join(f"'{e}'" for e in ev.elsewhere_entities[:3])
        parts.append(f"{names} not in the passage that matches best (node {ev.best_window.node})")
    if ev.negation_flip and ev.best_window is not None:
        parts.append(f'negation differs from node {ev.best_window.node}: "{snippet(ev.best_window.text)}"')
    if not parts and ev.missing_words:
        parts.append(f"words not in the context: {', '.join(ev.missing_words)}")
    if not parts:
        node = f"node {ev.best_window.node}" if ev.best_window is not None else "the context"
        parts.append(f"only a partial match with {node}")
    return "; ".join(parts) + f" (P(supported)={probability:.2f})"
