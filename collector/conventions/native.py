"""ragpulse's own attributes on one span, as `ragpulse_sdk.record_rag` writes them (the names and
their meaning are in `ragpulse_sdk.attributes`). A malformed value is an error the app's developer
should see: the trace is dead-lettered with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.conventions.common import Found, nodes_from_json, require, text
from collector.spans import Span
from ragpulse_sdk.attributes import DOCUMENTS, MODEL, QUERY, RESPONSE


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
