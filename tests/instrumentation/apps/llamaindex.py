"""LlamaIndex as its starter tutorial writes it: documents -> VectorStoreIndex -> query engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.embeddings.openai import OpenAIEmbedding
from llama_index.llms.openai import OpenAI

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask


def handbook_index(
    base_url: str, api_key: str, passages: Sequence[corpus.Passage] = corpus.PASSAGES
) -> VectorStoreIndex:
    """The handbook (or `passages`) indexed with OpenAI's LLM and embeddings at `base_url` (the
    scripted server)."""
    Settings.llm = OpenAI(model=corpus.MODEL, api_base=base_url, api_key=api_key, temperature=0)
    Settings.embed_model = OpenAIEmbedding(model=corpus.EMBEDDING_MODEL, api_base=base_url, api_key=api_key)
    documents = [Document(text=p.text, id_=p.id) for p in passages]
    return VectorStoreIndex.from_documents(documents)


def asker(query_engine: BaseQueryEngine) -> Ask:
    """Ask `query_engine`; the passages are its response's source nodes, in order."""

    def ask(question: str) -> Answer:
        response: Any = query_engine.query(question)
        passages = [
            {"id": n.node.node_id, "text": n.node.get_content(), "score": n.score}
            for n in response.source_nodes
        ]
        return Answer(passages, str(response.response))

    return ask


def build(base_url: str, api_key: str, passages: Sequence[corpus.Passage] = corpus.PASSAGES) -> Ask:
    index = handbook_index(base_url, api_key, passages)
    return asker(index.as_query_engine(similarity_top_k=corpus.TOP_K))
