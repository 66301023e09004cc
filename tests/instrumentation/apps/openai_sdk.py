"""RAG with the `openai` SDK alone: embed, rank by cosine, context in the system message."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from openai import OpenAI

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask

SYSTEM = (
    "You answer questions about the Brightleaf employee handbook. Answer only from these passages; "
    "if they do not contain the answer, say you don't know.\n\n{context}"
)


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / ((math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))) or 1.0)


def rank(
    client: OpenAI, passages: Sequence[corpus.Passage] = corpus.PASSAGES
) -> Callable[[str], list[corpus.Passage]]:
    """The retriever: the corpus embedded once (one batch), then the top passages of each question by
    cosine."""
    texts = [p.text for p in passages]
    vectors = [d.embedding for d in client.embeddings.create(model=corpus.EMBEDDING_MODEL, input=texts).data]

    def top(question: str) -> list[corpus.Passage]:
        query = client.embeddings.create(model=corpus.EMBEDDING_MODEL, input=question).data[0].embedding
        ranked = sorted(zip(passages, vectors, strict=True), key=lambda pv: -_cosine(query, pv[1]))
        return [passage for passage, _ in ranked[: corpus.TOP_K]]

    return top


def build(base_url: str, api_key: str, passages: Sequence[corpus.Passage] = corpus.PASSAGES) -> Ask:
    client = OpenAI(base_url=base_url, api_key=api_key)
    top_of = rank(client, passages)

    def ask(question: str) -> Answer:
        top = top_of(question)
        completion = client.chat.completions.create(
            model=corpus.MODEL,
            temperature=0,
            messages=[
                {"role": "system", "content": SYSTEM.format(context="\n\n".join(p.text for p in top))},
                {"role": "user", "content": question},
            ],
        )
        passages = [{"id": p.id, "text": p.text, "score": None} for p in top]
        return Answer(passages, completion.choices[0].message.content or "")

    return ask
