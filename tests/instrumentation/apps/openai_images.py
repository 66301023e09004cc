"""Multi-modal RAG with the `openai` SDK alone: the text passages in the system message (as the `openai`
app), and the retrieved images as `image_url` parts of the user message, beside the question.

One image is embedded as a data URI (a real 1x1 PNG), one is linked by URL, the two forms an app
sends to a vision model. The scripted LLM server never fetches the URL.
"""

from __future__ import annotations

from tests.instrumentation.apps import corpus
from tests.instrumentation.apps.common import Answer, Ask
from tests.instrumentation.apps.openai_sdk import SYSTEM, rank

PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
CHART_URL = "https://handbook.brightleaf.example/figures/policy-chart.png"
IMAGES = (PIXEL, CHART_URL)


def build(base_url: str, api_key: str) -> Ask:
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key=api_key)
    top_of = rank(client)

    def ask(question: str) -> Answer:
        top = top_of(question)
        images = [{"type": "image_url", "image_url": {"url": url}} for url in IMAGES]
        completion = client.chat.completions.create(
            model=corpus.MODEL,
            temperature=0,
            messages=[
                {"role": "system", "content": SYSTEM.format(context="\n\n".join(p.text for p in top))},
                {"role": "user", "content": [{"type": "text", "text": question}, *images]},
            ],
        )
        passages = [{"id": p.id, "text": p.text, "score": None} for p in top]
        passages += [{"id": f"image-{n}", "text": url, "score": None} for n, url in enumerate(IMAGES)]
        return Answer(passages, completion.choices[0].message.content or "")

    return ask
