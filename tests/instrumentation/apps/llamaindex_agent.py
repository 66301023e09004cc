"""Agentic RAG with LlamaIndex: a `FunctionAgent` whose one tool is a `QueryEngineTool` over the
handbook index (the query engine of the `llamaindex` app), as LlamaIndex's agent docs write it.

The agent calls the tool with a query; the tool's query engine retrieves (a RETRIEVER span inside the
TOOL span) and synthesises; the agent answers from the tool's output. The passages are the source
nodes of the tool's response, the ones the retriever returned.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import QueryEngineTool

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.llamaindex import handbook_index

SYSTEM_PROMPT = (
    "You answer questions about the Brightleaf employee handbook. Search the handbook with the "
    "search_handbook tool and answer only from what it returns."
)


def build(base_url: str, api_key: str) -> Ask:
    index = handbook_index(base_url, api_key)
    tool = QueryEngineTool.from_defaults(
        index.as_query_engine(similarity_top_k=corpus.TOP_K),
        name="search_handbook",
        description="Search the Brightleaf employee handbook; returns the most relevant passages.",
    )
    agent = FunctionAgent(tools=[tool], system_prompt=SYSTEM_PROMPT)

    async def run(question: str) -> Any:
        return await agent.run(user_msg=question)  # the handler starts its task on the running loop

    def ask(question: str) -> Answer:
        output = asyncio.run(run(question))
        sources = [call.tool_output.raw_output for call in output.tool_calls]
        nodes = [n for response in sources for n in getattr(response, "source_nodes", [])]
        passages = [{"id": n.node.node_id, "text": n.node.get_content(), "score": n.score} for n in nodes]
        return Answer(passages, str(output.response.content))

    return ask
