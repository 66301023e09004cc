"""The LangChain app serving one user's chat: each turn is its own `chain.invoke`, with the session in
the run's metadata (`config={"metadata": {"session_id": ...}}`).

That is how a session reaches OpenLLMetry's spans without the traceloop SDK: its LangChain
instrumentor writes every metadata key of a run as `traceloop.association.properties.<key>` on the
run's span (0.62.4, `callback_handler._create_span`), and LangChain hands a run's metadata down to its
child runs. (`Traceloop.set_association_properties` of the SDK sets the same context value, and the
SDK's span processor writes the same attributes.) The chain is stateless, as in the `langchain` app.
"""

from __future__ import annotations

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Ask
from tests.instrumentation.apps.langchain import build as build_chain_app

QUESTIONS = corpus.CONVERSATION


def build(base_url: str, api_key: str) -> Ask:
    return build_chain_app(base_url, api_key, metadata={"session_id": corpus.CONVERSATION_SESSION})
