"""Pydantic models of what an LLM judge must reply, and their JSON schemas for structured output."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


_ECHOED_TEXT = AliasChoices("item", "claim", "statement", "passage", "text")


class ItemsReply(_Reply):
    items: list[str]


class VerdictReply(_Reply):
    verdict: Literal["yes", "no", "idk"]
    reason: str = ""
    ids: list[int] = []


class _Echo(_Reply):
    """Which item a verdict is about (`judges.matching` places it by this, not by its position).

    The schema asks for the item's 0-based `index`: a few tokens. Its text is read when a model
    writes it (in JSON mode, under a name of its choosing) but never asked for: it costs as many
    completion tokens as the item itself.
    """

    index: int = -1  # -1: not given
    item: SkipJsonSchema[str] = Field("", validation_alias=_ECHOED_TEXT)


class ItemVerdict(VerdictReply, _Echo):
    pass


class VerdictsReply(_Reply):
    verdicts: list[ItemVerdict]


class CheckedItem(_Echo):
    verdicts: list[VerdictReply]  # one per check, in check order


class ChecksReply(_Reply):
    """verdicts_multi: for each item, one verdict per check, in check order."""

    items: list[CheckedItem]


class JudgedItem(VerdictReply):
    item: str


class JudgedItemsReply(_Reply):
    items: list[JudgedItem]


class QuestionsReply(_Reply):
    questions: list[str]
    noncommittal: bool = False


class StepsReply(_Reply):
    steps: list[str]


class RubricReply(_Reply):
    reason: str = ""
    score: int


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the form OpenAI's strict structured output accepts.

    Strict mode wants every property required and `additionalProperties: false`; titles and defaults
    are dropped because they cost prompt tokens and say nothing to the judge.
    """

    def tighten(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: tighten(v) for k, v in node.items() if k not in ("title", "default")}
            if node.get("type") == "object" and "properties" in node:
                node["required"] = list(node["properties"])
                node["additionalProperties"] = False
            return node
        if isinstance(node, list):
            return [tighten(v) for v in node]
        return node

    return tighten(model.model_json_schema())
