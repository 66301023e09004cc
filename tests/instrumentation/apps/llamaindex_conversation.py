"""The LlamaIndex app serving one user's chat: each turn is its own request to the same query engine,
inside OpenInference's `using_session(session_id=...)`, as OpenInference's docs tell an app to mark
the turns of a session (the instrumentation then writes `session.id` on the spans it makes).

The session is the app's to set, not the framework's: a web app reads it from the request. Here every
turn belongs to `corpus.CONVERSATION_SESSION`; the query engine itself is stateless (no chat history
in the prompt), as a handbook Q&A endpoint is.
"""

from __future__ import annotations

from openinference.instrumentation import using_session

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.llamaindex import build as build_query_engine_app

QUESTIONS = corpus.CONVERSATION


def build(base_url: str, api_key: str) -> Ask:
    ask_engine = build_query_engine_app(base_url, api_key)

    def ask(question: str) -> Answer:
        with using_session(session_id=corpus.CONVERSATION_SESSION):
            return ask_engine(question)

    return ask
