"""LlamaIndex as its starter tutorial writes it: documents -> VectorStoreIndex -> query engine."""

from __future__ import annotations

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.embeddings.openai import OpenAIEmbedding
from llama_index.llms.openai import OpenAI

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask


def build(base_url: str, api_key: str) -> Ask:
    Settings.llm = OpenAI(model=corpus.MODEL, api_base=base_url, api_key=api_key, temperature=0)
    Settings.embed_model = OpenAIEmbedding(model=corpus.EMBEDDING_MODEL, api_base=base_url, api_key=api_key)
    documents = [Document(text=p.text, id_=p.id) for p in corpus.PASSAGES]
    index = VectorStoreIndex.from_documents(documents)
    query_engine = index.as_query_engine(similarity_top_k=corpus.TOP_K)

    def ask(question: str) -> Answer:
        response = query_engine.query(question)
        passages = [
            {"id": n.node.node_id, "text": n.node.get_content(), "score": n.score}
            for n in response.source_nodes
        ]
        return Answer(passages, str(response.response))

    return ask
