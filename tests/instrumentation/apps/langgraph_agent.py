"""Agentic RAG with LangGraph: a prebuilt ReAct agent whose plain `@tool` retrieves (OpenInference
traces it as a TOOL span, not a RETRIEVER span), ChatOpenAI as the model.

The tool returns the top passages as text, one paragraph each, as LangChain's docs write a search
tool; the agent answers from the ToolMessage. Runs in the agents venv (requirements-agents.txt).
"""

from __future__ import annotations

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openai import OpenAI

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.openai_sdk import rank

PROMPT = (
    "You answer questions about the Brightleaf employee handbook. Search the handbook with the "
    "search_handbook tool and answer only from what it returns."
)


def build(base_url: str, api_key: str) -> Ask:
    top_of = rank(OpenAI(base_url=base_url, api_key=api_key))
    retrieved: list[corpus.Passage] = []

    @tool
    def search_handbook(query: str) -> str:
        """Search the Brightleaf employee handbook; returns the most relevant passages."""
        retrieved[:] = top_of(query)
        return "\n\n".join(p.text for p in retrieved)

    model = ChatOpenAI(model=corpus.MODEL, base_url=base_url, api_key=api_key, temperature=0)
    agent = create_react_agent(model, [search_handbook], prompt=PROMPT)

    def ask(question: str) -> Answer:
        state = agent.invoke({"messages": [{"role": "user", "content": question}]})
        passages = [{"id": p.id, "text": p.text, "score": None} for p in retrieved]
        return Answer(passages, str(state["messages"][-1].content))

    return ask
