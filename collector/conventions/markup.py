"""Framework markup is not content: DSPy's field templates read into their fields.

DSPy's ChatAdapter writes every prompt and every answer as `[[ ## field ## ]]` sections: the user
message holds the input fields (`[[ ## context ## ]]`, `[[ ## question ## ]]`), then an instruction
("Respond with the corresponding output fields, ..."); the model answers with the output fields
(`[[ ## reasoning ## ]]`, `[[ ## answer ## ]]`) and a closing `[[ ## completed ## ]]` marker. A list
field (the retrieved passages) is formatted `[1] «text»` per item. Read as plain text, the template
became passages and the markers became claims of the answer; read here, the context field's items are
the passages, the question field is the question and the answer field is the answer.
"""

from __future__ import annotations

import re

_FIELD = re.compile(r"^\[\[ ## (\w+) ## \]\][ \t]*$", re.M)
_ASK = re.compile(r"\n\s*Respond with the corresponding output fields\b.*\Z", re.S)
_ITEM = re.compile(r"^\[(\d+)\] «(.*?)»[ \t]*$", re.M | re.S)
_QUESTION_FIELDS = ("question", "query", "user_question", "input", "user_input", "q")
_CONTEXT_FIELDS = (
    "context",
    "contexts",
    "passages",
    "documents",
    "docs",
    "sources",
    "knowledge",
    "retrieved",
)
_ANSWER_FIELDS = ("answer", "response", "output", "final_answer", "result")
_NOT_ANSWER = frozenset({"reasoning", "rationale", "completed"})


def template_fields(text: str) -> dict[str, str] | None:
    """`{field: value}` of a text written in DSPy's template, None for any other text."""
    headers = list(_FIELD.finditer(text))
    if not headers:
        return None
    fields: dict[str, str] = {}
    for header, following in zip(headers, [*headers[1:], None], strict=True):
        end = following.start() if following else len(text)
        fields[header.group(1)] = _ASK.sub("", text[header.end() : end]).strip()
    return fields


def answer_text(response: str) -> str:
    """The answer field of a templated response (the named one, else the last output field that is
    not reasoning); any other response as it is."""
    fields = template_fields(response)
    if fields is None:
        return response
    named = next((fields[k] for k in _ANSWER_FIELDS if fields.get(k)), None)
    kept = [v for k, v in fields.items() if k not in _NOT_ANSWER and v]
    return named or (kept[-1] if kept else response)


def template_context(prompt: str) -> tuple[str | None, list[tuple[str, str]]] | None:
    """(question field, [(id, passage)] of the context field) of a templated prompt; None when the
    prompt is no template or has no context field."""
    fields = template_fields(prompt)
    if fields is None:
        return None
    question = next((fields[k] for k in _QUESTION_FIELDS if fields.get(k)), None)
    context = next((fields[k] for k in _CONTEXT_FIELDS if fields.get(k)), None)
    if context is None:
        return None
    items = [(number, text.strip()) for number, text in _ITEM.findall(context) if text.strip()]
    return question, items or [("0", context)]
