"""`RagRecord`: what the extract stage makes of one assembled trace, and what gets evaluated."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RetrievedNode:
    """One retrieved passage, in rank order. `score` is the retriever's, when it reported one."""

    id: str
    text: str
    score: float | None = None


@dataclass(frozen=True, slots=True)
class RagRecord:
    """One RAG interaction found in a trace.

    `anchor_span_id` is the span the evaluation span is parented to (the span that carried the
    response). Labels (`service`, `route`, `model`, and the versions the `version` label reads) are
    raw here; the Prometheus exporter maps them onto the configured allow-lists.
    """

    trace_id: str  # 32 lowercase hex
    anchor_span_id: str  # 16 lowercase hex
    query: str
    response: str
    nodes: tuple[RetrievedNode, ...] = ()
    expected_output: str | None = None
    baseline_output: str | None = None  # another version's answer to the query (`rag.baseline_output`)
    reference_contexts: tuple[str, ...] = ()
    reference_context_ids: tuple[str, ...] = ()  # ids of the documents retrieval should find
    service: str = "unknown"
    route: str = ""
    model: str = ""
    service_version: str = ""  # the app's OTel resource attribute `service.version`
    prompt_version: str = ""  # the prompt template's version, when the instrumentation records one
    convention: str = ""
    end_time_unix_nano: int = 0
    conversation_id: str = ""  # session.id / gen_ai.conversation.id; never a Prometheus label
    attributes: dict[str, str | float | int | bool] = field(default_factory=dict)

    def summary(self, max_chars: int = 2000) -> dict[str, object]:
        """A JSON-ready view for logs and `ragpulse inspect`; texts cut at `max_chars`."""
        return {
            "trace_id": self.trace_id,
            "span_id": self.anchor_span_id,
            "convention": self.convention,
            "service": self.service,
            "route": self.route,
            "model": self.model,
            "service_version": self.service_version,
            "prompt_version": self.prompt_version,
            "conversation_id": self.conversation_id,
            "query": self.query[:max_chars],
            "response": self.response[:max_chars],
            "nodes": [{"id": n.id, "score": n.score, "text": n.text[:max_chars]} for n in self.nodes],
            "has_expected_output": self.expected_output is not None,
            "reference_context_ids": list(self.reference_context_ids),
        }

    @property
    def top_retrieval_score(self) -> float | None:
        scores = [n.score for n in self.nodes if n.score is not None]
        return max(scores) if scores else None
