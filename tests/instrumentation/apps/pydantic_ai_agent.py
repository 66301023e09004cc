"""Agentic RAG with Pydantic AI: an agent whose `search_handbook` tool retrieves, traced by Pydantic AI's
own OpenTelemetry instrumentation (`Agent.instrument_all()`, no Logfire: GenAI conventions, content on
spans, instrumentation format version 5, the default).

The tool ranks the handbook by embeddings and returns the top passages as a list of `{id, text}`
documents, which Pydantic AI serialises as the tool result (`execute_tool` span, and the `tool` message
of the final model call). Runs in the agents venv (requirements-agents.txt).
"""

from __future__ import annotations

from openai import OpenAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.openai_sdk import rank

INSTRUCTIONS = (
    "You answer questions about the Brightleaf employee handbook. Search the handbook with the "
    "search_handbook tool and answer only from what it returns."
)


def build(base_url: str, api_key: str) -> Ask:
    top_of = rank(OpenAI(base_url=base_url, api_key=api_key))
    model = OpenAIChatModel(corpus.MODEL, provider=OpenAIProvider(base_url=base_url, api_key=api_key))
    Agent.instrument_all()  # the global tracer provider the app set up (instrument.setup)
    agent = Agent(model, instructions=INSTRUCTIONS)
    retrieved: list[corpus.Passage] = []

    @agent.tool_plain
    def search_handbook(query: str) -> list[dict[str, str]]:
        """Search the Brightleaf employee handbook; returns the most relevant passages."""
        retrieved[:] = top_of(query)
        return [{"id": p.id, "text": p.text} for p in retrieved]

    def ask(question: str) -> Answer:
        result = agent.run_sync(question)
        passages = [{"id": p.id, "text": p.text, "score": None} for p in retrieved]
        return Answer(passages, result.output)

    return ask
