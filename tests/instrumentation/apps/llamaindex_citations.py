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

from llama_index.core.query_engine import CitationQueryEngine

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Ask
from tests.instrumentation.apps.llamaindex import asker, handbook_index

QUESTIONS = corpus.CITATION_QUESTIONS
CITATION_CHUNK_SIZE = 28


def build(base_url: str, api_key: str) -> Ask:
    """The source nodes of a citation engine's response are its citation chunks, in the numbering the
    LLM was asked to cite: `source_nodes[0]` is [1]."""
    query_engine = CitationQueryEngine.from_args(
        handbook_index(base_url, api_key),
        similarity_top_k=corpus.TOP_K,
        citation_chunk_size=CITATION_CHUNK_SIZE,
        citation_chunk_overlap=0,
    )
    return asker(query_engine)
