"""LangChain's RAG tutorial chain in LCEL: retriever | format | prompt | ChatOpenAI | StrOutputParser."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_openai import ChatOpenAI, OpenAIEmbeddings

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask

PROMPT = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You are an assistant for questions about the Brightleaf employee handbook. Use the following "
            "pieces of retrieved context to answer the question. If you don't know the answer, say that "
            "you don't know.\n\n{context}",
        ),
        ("human", "{question}"),
    ]
)


class _RetrievedDocuments(BaseCallbackHandler):
    """Records what the retriever returned, for expected.json only (adds nothing to the trace)."""

    def __init__(self) -> None:
        self.documents: list[Document] = []

    def on_retriever_end(self, documents: Any, **kwargs: Any) -> None:
        self.documents = list(documents)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(doc.page_content for doc in docs)


def build(
    base_url: str,
    api_key: str,
    metadata: dict[str, str] | None = None,
    passages: Sequence[corpus.Passage] = corpus.PASSAGES,
) -> Ask:
    """`metadata`: passed with every run (LangChain's `config["metadata"]`), e.g. the chat's session;
    `passages`: what the store holds (the handbook by default)."""
    # check_embedding_ctx_length=False: what LangChain's docs prescribe for OpenAI-compatible servers
    # (the default tokenizes with tiktoken, which downloads its vocabulary).
    embeddings = OpenAIEmbeddings(
        model=corpus.EMBEDDING_MODEL, base_url=base_url, api_key=api_key, check_embedding_ctx_length=False
    )
    store = InMemoryVectorStore(embedding=embeddings)
    store.add_documents(
        [Document(page_content=p.text, id=p.id) for p in passages], ids=[p.id for p in passages]
    )
    retriever = store.as_retriever(search_kwargs={"k": corpus.TOP_K})
    llm = ChatOpenAI(model=corpus.MODEL, base_url=base_url, api_key=api_key, temperature=0)
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | PROMPT
        | llm
        | StrOutputParser()
    )

    def ask(question: str) -> Answer:
        retrieved = _RetrievedDocuments()
        config = RunnableConfig(callbacks=[retrieved])
        if metadata:
            config["metadata"] = metadata
        response = chain.invoke(question, config=config)
        passages = [
            {"id": d.id, "text": d.page_content, "score": d.metadata.get("score")}
            for d in retrieved.documents
        ]
        return Answer(passages, response)

    return ask
