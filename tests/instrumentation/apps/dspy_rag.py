"""RAG with DSPy: a custom retriever (a `dspy.Retrieve` subclass ranking the handbook by embeddings)
feeding `dspy.ChainOfThought("context, question -> answer")`, DSPy's LM calling the scripted server
through LiteLLM, traced by OpenInference's DSPy instrumentor (its LM span is the LLM call; the LiteLLM
instrumentor beside it wrote no span for DSPy's calls, so it is not on).

The retriever overrides `forward`, so no RETRIEVER span is written (the instrumentor wraps the base
class's): the passages reach the trace only inside DSPy's prompt, as the `[[ ## context ## ]]` field
(`[1] «...»` per passage), and the answer comes back as the `[[ ## answer ## ]]` field of DSPy's
template. Runs in the agents venv (requirements-agents.txt).
"""

from __future__ import annotations

from typing import Any

import dspy
from openai import OpenAI

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.openai_sdk import rank


class HandbookRetriever(dspy.Retrieve):
    """The top passages of the handbook by cosine of the scripted server's embeddings."""

    def __init__(self, base_url: str, api_key: str) -> None:
        super().__init__(k=corpus.TOP_K)
        self.top_of = rank(OpenAI(base_url=base_url, api_key=api_key))
        self.last: list[corpus.Passage] = []

    def forward(self, query: str, k: int | None = None, **kwargs: Any) -> dspy.Prediction:
        self.last = self.top_of(query)
        return dspy.Prediction(passages=[p.text for p in self.last])


class HandbookRAG(dspy.Module):
    def __init__(self, retriever: HandbookRetriever) -> None:
        super().__init__()
        self.retrieve = retriever
        self.respond = dspy.ChainOfThought("context, question -> answer")

    def forward(self, question: str) -> dspy.Prediction:
        context = self.retrieve(question).passages
        return self.respond(context=context, question=question)


def build(base_url: str, api_key: str) -> Ask:
    lm = dspy.LM(f"openai/{corpus.MODEL}", api_base=base_url, api_key=api_key, temperature=0, cache=False)
    dspy.configure(lm=lm)
    retriever = HandbookRetriever(base_url, api_key)
    rag = HandbookRAG(retriever)

    def ask(question: str) -> Answer:
        prediction = rag(question=question)
        passages = [{"id": p.id, "text": p.text, "score": None} for p in retriever.last]
        return Answer(passages, str(prediction.answer))

    return ask
