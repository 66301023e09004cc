"""Haystack's first RAG pipeline tutorial: BM25 retriever -> ChatPromptBuilder -> OpenAIChatGenerator."""

from __future__ import annotations

from collections.abc import Sequence

from haystack import Document, Pipeline
from haystack.components.builders import ChatPromptBuilder
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.utils import Secret

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask

TEMPLATE = [
    ChatMessage.from_user(
        """
Given the following information from the Brightleaf employee handbook, answer the question.

Context:
{% for document in documents %}
    {{ document.content }}
{% endfor %}

Question: {{ question }}
Answer:
"""
    )
]


def build(base_url: str, api_key: str, passages: Sequence[corpus.Passage] = corpus.PASSAGES) -> Ask:
    store = InMemoryDocumentStore()
    store.write_documents([Document(id=p.id, content=p.text) for p in passages])
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=corpus.TOP_K))
    pipeline.add_component("prompt_builder", ChatPromptBuilder(template=TEMPLATE))
    pipeline.add_component(
        "llm",
        OpenAIChatGenerator(
            model=corpus.MODEL,
            api_key=Secret.from_token(api_key),
            api_base_url=base_url,
            generation_kwargs={"temperature": 0},
        ),
    )
    pipeline.connect("retriever", "prompt_builder")
    pipeline.connect("prompt_builder.prompt", "llm.messages")

    def ask(question: str) -> Answer:
        result = pipeline.run(
            {"retriever": {"query": question}, "prompt_builder": {"question": question}},
            include_outputs_from={"retriever"},
        )
        passages = [
            {"id": d.id, "text": d.content, "score": d.score} for d in result["retriever"]["documents"]
        ]
        return Answer(passages, result["llm"]["replies"][0].text)

    return ask
