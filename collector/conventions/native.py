"""ragpulse's own attributes on one span, for apps instrumented by hand (see `collector.sdk`).

`rag.query`, `rag.response`, `rag.retrieval.documents` (JSON list of {id, content, score}),
optionally `rag.model`, `rag.route`, `rag.expected_output`, `rag.reference_contexts`.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.conventions.common import Found, nodes_from_json, require, text
from collector.spans import Span

QUERY, RESPONSE, DOCUMENTS, MODEL = "rag.query", "rag.response", "rag.retrieval.documents", "rag.model"


class Native:
    name = "ragpulse"

    def find(self, spans: Sequence[Span]) -> Found | None:
        carriers = [s for s in spans if QUERY in s.attributes or RESPONSE in s.attributes]
        if not carriers:
            return None
        span = carriers[-1]
        query, response = require(text(span, QUERY), text(span, RESPONSE), "ragpulse-native")
        nodes = nodes_from_json(span, DOCUMENTS) or []
        return Found(query=query, response=response, anchor=span, nodes=nodes, model=text(span, MODEL) or "")
