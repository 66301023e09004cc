"""The `openai` app serving one user's chat under the official OTel GenAI instrumentation: each turn is
an agent invocation the app opens with OpenTelemetry's GenAI utility (opentelemetry-util-genai, the
library opentelemetry-instrumentation-openai-v2 itself records through), whose `conversation_id`
becomes `gen_ai.conversation.id` on the `invoke_agent` span.

That span is the only place the official GenAI stack writes a conversation id: the openai-v2
instrumentation (2.4b0) has no way to set it on its chat spans. The turns are stateless, as in the
`openai` app.
"""

from __future__ import annotations

from opentelemetry.util.genai.handler import get_telemetry_handler

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.openai_sdk import build as build_sdk_app

QUESTIONS = corpus.CONVERSATION
AGENT_NAME = "handbook-assistant"


def build(base_url: str, api_key: str) -> Ask:
    ask_model = build_sdk_app(base_url, api_key)
    handler = get_telemetry_handler()  # the global tracer provider, as the instrumentation's

    def ask(question: str) -> Answer:
        with handler.invoke_local_agent("openai", request_model=corpus.MODEL) as agent:
            agent.agent_name = AGENT_NAME
            agent.conversation_id = corpus.CONVERSATION_SESSION
            return ask_model(question)

    return ask
