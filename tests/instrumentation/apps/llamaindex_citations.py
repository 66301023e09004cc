"""LlamaIndex's CitationQueryEngine as its citation guide writes it: VectorStoreIndex ->
`CitationQueryEngine.from_args(index, similarity_top_k=..., citation_chunk_size=...)`. The engine
splits the retrieved nodes into citation chunks ("Source 1:\\n<text>\\n", numbered across all nodes)
and asks the LLM to cite them as [1], [2].

`citation_chunk_size` is the guide's knob for granular sources (512 tokens for real documents); the
handbook's passages are two sentences long, so a size scaled to them (28 tokens, no overlap) gives a
chunk per sentence, and two chunks per retrieved node: the numbers the answer cites are chunks, not
retrieval ranks. It answers `corpus.CITATION_QUESTIONS`, whose answer cites a right and a wrong source.
"""

from __future__ import annotations

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.embeddings.openai import OpenAIEmbedding
from llama_index.llms.openai import OpenAI

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask

QUESTIONS = corpus.CITATION_QUESTIONS
CITATION_CHUNK_SIZE = 28


def build(base_url: str, api_key: str) -> Ask:
    Settings.llm = OpenAI(model=corpus.MODEL, api_base=base_url, api_key=api_key, temperature=0)
    Settings.embed_model = OpenAIEmbedding(model=corpus.EMBEDDING_MODEL, api_base=base_url, api_key=api_key)
    documents = [Document(text=p.text, id_=p.id) for p in corpus.PASSAGES]
    index = VectorStoreIndex.from_documents(documents)
    query_engine = CitationQueryEngine.from_args(
        index,
        similarity_top_k=corpus.TOP_K,
        citation_chunk_size=CITATION_CHUNK_SIZE,
        citation_chunk_overlap=0,
    )

    def ask(question: str) -> Answer:
        response = query_engine.query(question)
        # The citation chunks in the numbering the LLM was asked to cite: `source_nodes[0]` is [1].
        passages = [
            {"id": n.node.node_id, "text": n.node.get_content(), "score": n.score}
            for n in response.source_nodes
        ]
        return Answer(passages, str(response.response))

    return ask
