"""RAG through LiteLLM's SDK: embeddings ranking as in the `openai` app, passages in the system message,
`litellm.completion` to the scripted server (its `openai/` provider).

Two instrumentations: OpenInference's LiteLLM instrumentor (`openinference`), and LiteLLM's own
OpenTelemetry callback (`builtin`: `litellm.callbacks = ["otel"]`, as LiteLLM's docs turn it on). With
the app's `POST /ask` span open, the callback writes the call's attributes (GenAI `gen_ai.input.messages`
/ `gen_ai.output.messages`) onto that span instead of opening one of its own, from a logging thread
after `completion` has returned: an app whose request ends first loses them ("Setting attribute on
ended span"). This app answers once they are written, as a web app whose response takes longer does.
Runs in the agents venv (requirements-agents.txt, where LiteLLM is).
"""

from __future__ import annotations

import threading
from typing import Any

import litellm
from openai import OpenAI
from opentelemetry import trace

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.openai_sdk import SYSTEM, rank


class OtelCallback:
    """LiteLLM's own instrumentation, switched on the way its docs say (an instrumentor's shape, so
    that instrument.setup turns it on like the others)."""

    def instrument(self, **_: Any) -> None:
        litellm.callbacks = ["otel"]
        _CALLBACK.set()


_CALLBACK = threading.Event()  # set when LiteLLM's callback is on: wait for it to write onto the span


def _written(span: Any) -> bool:
    return "gen_ai.output.messages" in (getattr(span, "attributes", None) or {})


def build(base_url: str, api_key: str) -> Ask:
    top_of = rank(OpenAI(base_url=base_url, api_key=api_key))

    def ask(question: str) -> Answer:
        top = top_of(question)
        response: Any = litellm.completion(
            model=f"openai/{corpus.MODEL}",
            api_base=base_url,
            api_key=api_key,
            temperature=0,
            messages=[
                {"role": "system", "content": SYSTEM.format(context="\n\n".join(p.text for p in top))},
                {"role": "user", "content": question},
            ],
        )
        span, waited = trace.get_current_span(), threading.Event()
        while _CALLBACK.is_set() and not _written(span) and not waited.wait(0.05):
            pass  # LiteLLM's logging thread has not written onto the request span yet
        passages = [{"id": p.id, "text": p.text, "score": None} for p in top]
        return Answer(passages, response.choices[0].message.content or "")

    return ask
