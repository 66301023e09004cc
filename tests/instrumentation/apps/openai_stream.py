"""The `openai` app with a streamed completion (`stream=True`, usage in the last chunk): the answer is
the chunks' content joined, as a chat UI shows it."""

from __future__ import annotations

from openai import OpenAI

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.openai_sdk import SYSTEM, rank


def build(base_url: str, api_key: str) -> Ask:
    client = OpenAI(base_url=base_url, api_key=api_key)
    top_of = rank(client)

    def ask(question: str) -> Answer:
        top = top_of(question)
        stream = client.chat.completions.create(
            model=corpus.MODEL,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
            messages=[
                {"role": "system", "content": SYSTEM.format(context="\n\n".join(p.text for p in top))},
                {"role": "user", "content": question},
            ],
        )
        answer = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        return Answer([{"id": p.id, "text": p.text, "score": None} for p in top], answer)

    return ask
