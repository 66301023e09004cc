"""ragpulse's own attributes on one span, for apps instrumented by hand (see `collector.sdk`).

`rag.query`, `rag.response`, `rag.retrieval.documents` (JSON list of {id, content, score}),
optionally `rag.model`, `rag.route`, `rag.expected_output`, `rag.reference_contexts`,
`rag.conversation_id`. Unlike third-party conventions, these are the app's explicit statement of
a RAG interaction, so a malformed value is an error the app's developer should see (dead letter).
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.conventions.common import Found, nodes_from_json, require, text
from collector.spans import Span

QUERY, RESPONSE, DOCUMENTS, MODEL = "rag.query", "rag.response", "rag.retrieval.documents", "rag.model"


class Native:
    name = "ragpulse"
    looks_for = f"{QUERY} and {RESPONSE} (+ {DOCUMENTS} JSON) on one span"

    def find(self, spans: Sequence[Span]) -> list[Found]:
        found = []
        for span in (s for s in spans if QUERY in s.attributes or RESPONSE in s.attributes):
            query, response = require(text(span, QUERY), text(span, RESPONSE), "ragpulse-native")
            nodes = nodes_from_json(span, DOCUMENTS) or []
            found.append(Found(query, response, span, nodes, text(span, MODEL) or ""))
        return found
