"""The test case: one RAG interaction to evaluate, under deepeval's or ragas' field names.

People arrive with datasets written for either library, so both vocabularies are accepted on input;
inside ragpulse only deepeval's names are used (`input`, `actual_output`, `retrieval_context`,
`expected_output`, `context`). deepeval has no document ids, so those take ragas' names
(`retrieved_context_ids`, `reference_context_ids`; LlamaIndex's `retrieved_ids`, `expected_ids` too).
A conversation is a case with `turns` (deepeval's `ConversationalTestCase.turns`; ragas' `MultiTurnSample`
carries them in `user_input`, which is read the same way when it holds a list of messages).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator


class CaseField(StrEnum):
    """The inputs a metric can require (declared as data on every metric)."""

    INPUT = "input"
    ACTUAL_OUTPUT = "actual_output"
    RETRIEVAL_CONTEXT = "retrieval_context"
    EXPECTED_OUTPUT = "expected_output"
    CONTEXT = "context"
    RETRIEVED_CONTEXT_IDS = "retrieved_context_ids"
    REFERENCE_CONTEXT_IDS = "reference_context_ids"
    TURNS = "turns"
    BASELINE_OUTPUT = "baseline_output"


# Message roles as the libraries write them: deepeval user/assistant, ragas human/ai, OpenAI's and
# LangChain's names. Other roles (system, tool) are not turns of the conversation.
_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "bot": "assistant"}


class Turn(BaseModel):
    """One message of a conversation. `retrieval_context`: what the RAG app retrieved for this reply."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    role: str
    content: str
    retrieval_context: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _message(cls, value: Any) -> Any:
        """deepeval `Turn`s, ragas/LangChain messages (`type` "human"/"ai") and OpenAI message dicts."""
        if not isinstance(value, Mapping):
            value = {
                name: getattr(value, name, None) for name in ("role", "type", "content", "retrieval_context")
            }
        data = dict(value)
        role = str(data.get("role") or data.get("type") or "").lower()
        data["role"] = _ROLES.get(role, role)
        if not isinstance(data.get("content"), str):
            data["content"] = "" if data.get("content") is None else str(data["content"])
        return data


class MissingFieldError(ValueError):
    """A metric needs a test-case field that is absent or empty."""

    def __init__(self, metric: str, field: CaseField) -> None:
        self.metric = metric
        self.field = field
        super().__init__(
            f"metric {metric!r} needs the test-case field {field.value!r}, which is missing or empty"
        )


class TestCase(BaseModel):
    """One case. Contexts are lists of passages in rank order; a lone string becomes a one-item list."""

    __test__ = False  # not a pytest test class, despite the name

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    input: str | None = Field(default=None, validation_alias=AliasChoices("input", "question", "user_input"))
    actual_output: str | None = Field(
        default=None, validation_alias=AliasChoices("actual_output", "answer", "response")
    )
    retrieval_context: list[str] | None = Field(
        default=None, validation_alias=AliasChoices("retrieval_context", "contexts", "retrieved_contexts")
    )
    expected_output: str | None = Field(
        default=None, validation_alias=AliasChoices("expected_output", "ground_truth", "reference")
    )
    context: list[str] | None = Field(
        default=None, validation_alias=AliasChoices("context", "reference_contexts")
    )
    retrieved_context_ids: list[str] | None = Field(
        default=None, validation_alias=AliasChoices("retrieved_context_ids", "retrieved_ids")
    )
    reference_context_ids: list[str] | None = Field(
        default=None, validation_alias=AliasChoices("reference_context_ids", "expected_ids")
    )
    # the other run's answer to the same input, for pairwise comparison (LangChain's `prediction_b`)
    baseline_output: str | None = Field(
        default=None, validation_alias=AliasChoices("baseline_output", "prediction_b")
    )
    turns: list[Turn] | None = Field(default=None, validation_alias=AliasChoices("turns", "messages"))
    id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _multi_turn_input(cls, value: Any) -> Any:
        """ragas' `MultiTurnSample.user_input` is the list of messages: those are the turns."""
        if isinstance(value, Mapping):
            for name in ("user_input", "input", "question"):
                messages = value.get(name)
                if isinstance(messages, list) and messages and all(map(_is_message, messages)):
                    value = {key: item for key, item in value.items() if key != name}
                    value.setdefault("turns", messages)
                    break
        return value

    @field_validator("turns", mode="after")
    @classmethod
    def _conversation_turns(cls, value: list[Turn] | None) -> list[Turn] | None:
        """Only user and assistant messages are turns; none left is no conversation."""
        kept = [turn for turn in value or [] if turn.role in ("user", "assistant")]
        return kept or None

    @field_validator("retrieval_context", "context", mode="before")
    @classmethod
    def _passages(cls, value: Any) -> Any:
        """CSV cells and hand-written JSON often hold one passage, or a JSON-encoded list of them."""
        if isinstance(value, str):
            stripped = value.strip()
            if not stripped:
                return None
            if stripped.startswith("["):
                try:
                    decoded = json.loads(stripped)
                except json.JSONDecodeError:
                    return [value]
                if isinstance(decoded, list):
                    return [str(item) for item in decoded]
            return [value]
        return value

    @field_validator("retrieved_context_ids", "reference_context_ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        """Ids are compared as text: ragas accepts integer ids, CSV cells hold a JSON list or one id."""
        if isinstance(value, str):
            stripped = value.strip()
            if stripped.startswith("["):
                try:
                    value = json.loads(stripped)
                except json.JSONDecodeError:
                    return [stripped]
            else:
                return [stripped] if stripped else None
        if isinstance(value, list | tuple):
            return [str(item) for item in value if item is not None]
        return value

    @field_validator("input", "actual_output", "expected_output", "baseline_output", mode="before")
    @classmethod
    def _blank_is_missing(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    def has(self, field: CaseField) -> bool:
        if field is CaseField.TURNS:  # a conversation needs at least one reply to judge
            return any(turn.role == "assistant" and turn.content.strip() for turn in self.turns or ())
        value = getattr(self, field.value)
        if isinstance(value, list):
            return any(item.strip() for item in value)
        return value is not None

    def require(self, metric: str, fields: tuple[CaseField, ...]) -> None:
        for field in fields:
            if not self.has(field):
                raise MissingFieldError(metric, field)

    def text_of(self, field: CaseField) -> str:
        """The field as one text (passages numbered, turns as a transcript), for judges that see whole
        fields (G-Eval)."""
        if field is CaseField.TURNS:
            return transcript(self.turns or ())
        value = getattr(self, field.value)
        if isinstance(value, list):
            return "\n".join(f"[{i}] {passage}" for i, passage in enumerate(value))
        return value or ""


def _is_message(value: object) -> bool:
    """A chat message as a dict or object (ragas/LangChain messages have `type`, deepeval turns `role`)."""
    if isinstance(value, Mapping):
        return "content" in value and ("role" in value or "type" in value)
    return hasattr(value, "content") and (hasattr(value, "role") or hasattr(value, "type"))


def transcript(turns: Sequence[Turn]) -> str:
    """Turns as the judge reads them: one `role: content` line per message, in order."""
    return "\n".join(f"{turn.role}: {turn.content}" for turn in turns)


def _names(alias: object) -> list[str]:
    choices = getattr(alias, "choices", None)
    return [str(choice) for choice in choices] if choices else []


# Every input name TestCase accepts: deepeval's (LLMTestCase) and ragas' (SingleTurnSample) attributes.
_ATTRIBUTES = (
    *(name for info in TestCase.model_fields.values() for name in _names(info.validation_alias)),
    "id",
    "metadata",
)


def case_input(case: object) -> TestCase | Mapping[str, Any]:
    """A TestCase or a mapping as is; any other object (deepeval's `LLMTestCase`, ragas'
    `SingleTurnSample`) read by attribute names, so neither library has to be imported here."""
    if isinstance(case, TestCase | Mapping):
        return case
    data: dict[str, Any] = {}
    for name in _ATTRIBUTES:
        value = getattr(case, name, None)
        if value is not None and not callable(value):
            data.setdefault(name, value)
    label = getattr(case, "name", None)  # deepeval's test-case name
    if "id" not in data and isinstance(label, str) and label:
        data["id"] = label
    metadata = data.get("metadata", getattr(case, "additional_metadata", None))
    data.pop("metadata", None)
    if isinstance(metadata, Mapping):
        data["metadata"] = dict(metadata)
    return data
