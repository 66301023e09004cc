"""The test case: one RAG interaction to evaluate, under deepeval's or ragas' field names.

People arrive with datasets written for either library, so both vocabularies are accepted on input;
inside ragpulse only deepeval's names are used (`input`, `actual_output`, `retrieval_context`,
`expected_output`, `context`). deepeval has no document ids, so those take ragas' names
(`retrieved_context_ids`, `reference_context_ids`; LlamaIndex's `retrieved_ids`, `expected_ids` too).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator


class CaseField(StrEnum):
    """The inputs a metric can require (declared as data on every metric)."""

    INPUT = "input"
    ACTUAL_OUTPUT = "actual_output"
    RETRIEVAL_CONTEXT = "retrieval_context"
    EXPECTED_OUTPUT = "expected_output"
    CONTEXT = "context"
    RETRIEVED_CONTEXT_IDS = "retrieved_context_ids"
    REFERENCE_CONTEXT_IDS = "reference_context_ids"


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
    id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

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

    @field_validator("input", "actual_output", "expected_output", mode="before")
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
        value = getattr(self, field.value)
        if isinstance(value, list):
            return any(item.strip() for item in value)
        return value is not None

    def require(self, metric: str, fields: tuple[CaseField, ...]) -> None:
        for field in fields:
            if not self.has(field):
                raise MissingFieldError(metric, field)

    def text_of(self, field: CaseField) -> str:
        """The field as one text (passages numbered), for judges that see whole fields (G-Eval)."""
        value = getattr(self, field.value)
        if isinstance(value, list):
            return "\n".join(f"[{i}] {passage}" for i, passage in enumerate(value))
        return value or ""


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
