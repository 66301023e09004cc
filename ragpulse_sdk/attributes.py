"""ragpulse's own span attributes, named once: `record_rag` writes them, the sidecar reads them.

For apps that are not instrumented by OpenInference, OpenLLMetry or the OTel GenAI conventions
(or that want to state a RAG interaction explicitly). `QUERY`, `RESPONSE` and `DOCUMENTS` sit on
one span; `DOCUMENTS` is a JSON list of `{id, content, score}`. Unlike third-party conventions,
these are the app's explicit statement of a RAG interaction, so a malformed value is an error the
app's developer should see (the sidecar dead-letters the trace with the reason).
"""

QUERY = "rag.query"
RESPONSE = "rag.response"
DOCUMENTS = "rag.retrieval.documents"  # JSON list of {"id", "content", "score"}
MODEL = "rag.model"
ROUTE = "rag.route"
EXPECTED_OUTPUT = "rag.expected_output"  # a reference answer (offline evaluation, canaries)
REFERENCE_CONTEXTS = "rag.reference_contexts"  # JSON list of ground-truth passages
CONVERSATION_ID = "rag.conversation_id"
