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
BASELINE_OUTPUT = "rag.baseline_output"  # another version's answer to the same query (shadow, A/B)
REFERENCE_CONTEXTS = "rag.reference_contexts"  # JSON list of ground-truth passages
REFERENCE_CONTEXT_IDS = "rag.reference_context_ids"  # JSON list of the ids of the right documents
CONVERSATION_ID = "rag.conversation_id"
PROMPT_VERSION = "ragpulse.prompt.version"  # the prompt template's version (a `version` label source)

# Human feedback on an answer (`record_feedback`), on any span or on a span event named FEEDBACK.
FEEDBACK = "ragpulse.feedback"  # a score 0..1, or thumbs: up/down, positive/negative, true/false, 👍/👎
FEEDBACK_TRACE_ID = "ragpulse.feedback.trace_id"  # the answer's trace, when feedback comes later in another
FEEDBACK_SPAN_ID = "ragpulse.feedback.span_id"
FEEDBACK_METRIC = "ragpulse.feedback.metric"  # what the human judged; unset = the answer as a whole
FEEDBACK_COMMENT = "ragpulse.feedback.comment"  # free text: read by people in traces, never a label
