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


def contradicted_reason(ev: Evidence, probability: float) -> str:
    """What the passage says instead: another value, another name, the opposite."""
    window = ev.conflict_window or ev.best_window
    node = window.node if window is not None else 0
    parts: list[str] = []
    if ev.window_numbers:
        parts.append(f"it says {', '.join(ev.window_numbers[:3])}, not {', '.join(ev.contested_numbers[:3])}")
    quoted = window.text.lower() if window is not None else ""
    named = [e for e in (*ev.missing_entities, *ev.elsewhere_entities) if e.lower() not in quoted]
    if named:
        names = ", ".join(f"'{e}'" for e in named[:3])
        parts.append(f"it names someone or something else than {names}")
    if ev.negation_flip:
        parts.append("it states the opposite (negation)")
    if ev.antonyms:
        parts.append(", ".join(f"'{said}' where the claim says '{claim}'" for claim, said in ev.antonyms[:2]))
    text = f': "{snippet(window.text)}"' if window is not None else ""
    detail = "; ".join(parts) or "it states otherwise"
    return f"contradicted by node {node}{text}: {detail} (P(contradicted)={probability:.2f})"


def unsupported_reason(ev: Evidence, probability: float) -> str:
    """Not found in the context; the most specific gap first: a number, a name, then rare words."""
    parts: list[str] = []
    if ev.missing_numbers:
        said = f" (the best passage says {', '.join(ev.window_numbers[:3])})" if ev.window_numbers else ""
        parts.append(f"{', '.join(ev.missing_numbers[:3])} not found in the context{said}")
    if ev.missing_entities:
        names = ", ".join(f"'{e}'" for e in ev.missing_entities[:3])
        parts.append(f"{names} not found in the context")
    if ev.elsewhere_entities and ev.best_window is not None:
        names = ", ".join(f"'{e}'" for e in ev.elsewhere_entities[:3])
        parts.append(f"{names} not in the passage that matches best (node {ev.best_window.node})")
    if ev.negation_flip and ev.best_window is not None:
        parts.append(f'negation differs from node {ev.best_window.node}: "{snippet(ev.best_window.text)}"')
    if not parts and ev.missing_words:
        parts.append(f"not found in the context: {', '.join(ev.missing_words)}")
    if not parts:
        node = f"node {ev.best_window.node}" if ev.best_window is not None else "the context"
        parts.append(f"not found in the context (only a partial match with {node})")
    return "; ".join(parts) + f" (P(supported)={probability:.2f})"


def absent_reason(topic: str, probability: float) -> str:
    return (
        f"right to abstain: the context does not state {snippet(topic, 60)!r} (P(stated)={probability:.2f})"
    )


def stated_reason(topic: str, ev: Evidence, probability: float) -> str:
    node = f"node {ev.best_window.node}" if ev.best_window is not None else "the context"
    return f"wrong to abstain: {node} states {snippet(topic, 60)!r} (P(stated)={probability:.2f})"


def answers_reason(question: str, ev: Evidence, probability: float | None) -> str:
    """`probability` is None when the passage was found by the answer type the question asks for."""
    node = f"node {ev.best_window.node}" if ev.best_window is not None else "the context"
    how = f" (P(stated)={probability:.2f})" if probability is not None else ""
    return f"{node} answers {snippet(question, 60)!r}{how}"


def unanswered_reason(question: str, probability: float | None) -> str:
    if probability is None:
        return f"no passage supplies what {snippet(question, 60)!r} asks for"
    return f"the context does not answer {snippet(question, 60)!r} (P(stated)={probability:.2f})"
