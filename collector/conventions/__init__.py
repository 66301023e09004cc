"""Extract `RagRecord`s from an assembled trace: one per generation that consumed retrieved context.

Each third-party convention (one small module each) reads the trace into the same three shapes:
retrievals, generations (LLM calls) and chains (app-level spans); the shapes of all conventions are
merged, because one app often runs two instrumentations (OpenInference for the framework and the
official OpenAI instrumentation for the SDK), and `generations.pair` decides once which generation
consumed which passages. ragpulse's own `rag.*` attributes, when present, are taken as they are.
`explain` says, for a trace that gave nothing, what was missing and where extraction looked;
`read` also names the reason (`UNREADABLE`), which the page and /metrics count per service.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from collector.conventions import genai, native, openinference, openllmetry, vercel_ai
from collector.conventions.common import (
    ExtractionError,
    Found,
    conversation_id,
    parse_json,
    prompt_version,
    require,
    route,
    service_version,
    text,
)
from collector.conventions.generations import Generation, Retrieval, TraceShapes, pair
from collector.conventions.prompt_context import PromptContextConfig
from collector.records import RagRecord
from collector.spans import Span
from ragpulse_sdk import attributes


class ExtractionConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_context: PromptContextConfig = Field(default_factory=PromptContextConfig)


# Order matters only for naming: a span two conventions both read is credited to the first.
CONVENTIONS = (openinference.OpenInference(), openllmetry.OpenLLMetry(), genai.GenAI(), vercel_ai.VercelAI())
NATIVE = native.Native()
_DEFAULT = ExtractionConfig()


@dataclass(slots=True)
class _Merged:
    shapes: TraceShapes = field(default_factory=TraceShapes)
    source: dict[str, str] = field(default_factory=dict)  # span id -> convention that read it


@dataclass(frozen=True, slots=True)
class Reading:
    """What extraction made of a trace: its records or, with none, why not (an `UNREADABLE` key), from
    the same reading of the spans."""

    records: list[RagRecord]
    unreadable: str = ""


def read(trace_id: str, spans: Sequence[Span], config: ExtractionConfig = _DEFAULT) -> Reading:
    """The trace's RagRecords, or why it has none. Raises only ExtractionError."""
    found = NATIVE.find(spans)
    if found:
        return Reading([_record(trace_id, spans, f, NATIVE.name) for f in found])
    merged = _merge(spans)
    records = [
        _record(trace_id, spans, f, merged.source.get(f.anchor.span_id, ""))
        for f in pair(merged.shapes, spans, config.prompt_context)
    ]
    return Reading(records, "" if records else _unreadable(merged.shapes, config))


def extract(trace_id: str, spans: Sequence[Span], config: ExtractionConfig = _DEFAULT) -> list[RagRecord]:
    """The trace's RagRecords; empty when it holds no RAG interaction. Raises only ExtractionError."""
    return read(trace_id, spans, config).records


# Why a trace gave no record, in the words the page, /metrics (`reason`) and `ragpulse inspect` share.
UNREADABLE: dict[str, str] = {
    "not_rag": "no retrieval and no LLM span: not a RAG trace (e.g. an index build or an embedding batch)",
    "no_output": "no LLM span carries output text: is content capture on in the instrumentation?",
    "no_context": "no retrieval span, and no context found in the prompt",
    "prompt_context_off": "no retrieval span, and reading context from the prompt is off "
    "(extraction.prompt_context)",
    "no_question": "retrievals and generations found, but no question: no chain input, retrieval query "
    "or user message",
}


def _unreadable(shapes: TraceShapes, config: ExtractionConfig) -> str:
    if not shapes.generations and not shapes.retrievals:
        return "not_rag"
    if not any(g.response for g in shapes.generations):
        return "no_output"
    if not shapes.retrievals:
        return "no_context" if config.prompt_context.enabled else "prompt_context_off"
    return "no_question"


def explain(spans: Sequence[Span], config: ExtractionConfig = _DEFAULT) -> list[str]:
    """Why a trace gave no record: per convention, what it found and what it looked for, then the
    reason (as `unreadable` names it)."""
    notes = [f"{convention.name}: looks for {convention.looks_for}" for convention in (*CONVENTIONS, NATIVE)]
    shapes = _merge(spans).shapes
    with_docs = [r for r in shapes.retrievals if r.nodes]
    answered = [g for g in shapes.generations if g.response]
    notes.append(
        f"found {len(shapes.retrievals)} retrieval span(s) ({len(with_docs)} with passages), "
        f"{len(shapes.generations)} LLM span(s) ({len(answered)} with an output), "
        f"{len(shapes.chains)} chain span(s)"
    )
    reason = _unreadable(shapes, config)
    sentence = UNREADABLE[reason]
    if reason == "no_context":
        sentence += (
            f" (messages with roles {config.prompt_context.roles}, or text before "
            f"{config.prompt_context.question_markers} in the user message)"
        )
    notes.append(f"{reason}: {sentence}")
    return notes


def _merge(spans: Sequence[Span]) -> _Merged:
    merged = _Merged()
    generations: dict[str, Generation] = {}
    retrievals: dict[str, Retrieval] = {}
    for convention in CONVENTIONS:
        shapes = convention.shapes(spans)
        for r in shapes.retrievals:
            known = retrievals.get(r.span.span_id)
            if known is None or len(r.nodes) > len(known.nodes):
                retrievals[r.span.span_id] = r
                merged.source.setdefault(r.span.span_id, convention.name)
        for g in shapes.generations:
            known_g = generations.get(g.span.span_id)
            if known_g is None:
                generations[g.span.span_id] = g
                merged.source[g.span.span_id] = convention.name
            else:  # two conventions read one LLM span: keep what each knew
                known_g.messages = known_g.messages or g.messages
                known_g.response = known_g.response or g.response
                known_g.model = known_g.model or g.model
        for c in shapes.chains:
            if c.span.span_id not in merged.source:
                merged.source[c.span.span_id] = convention.name
                merged.shapes.chains.append(c)
    merged.shapes.retrievals = list(retrievals.values())
    merged.shapes.generations = list(generations.values())
    return merged


def _record(trace_id: str, spans: Sequence[Span], found: Found, convention: str) -> RagRecord:
    expected = next((v for s in spans if (v := text(s, attributes.EXPECTED_OUTPUT))), None)
    baseline = next((v for s in spans if (v := text(s, attributes.BASELINE_OUTPUT))), None)
    return RagRecord(
        trace_id=trace_id,
        anchor_span_id=found.anchor.span_id,
        query=found.query,
        response=found.response,
        nodes=tuple(found.nodes),
        expected_output=expected,
        baseline_output=baseline,
        reference_contexts=_strings(spans, attributes.REFERENCE_CONTEXTS),
        reference_context_ids=_strings(spans, attributes.REFERENCE_CONTEXT_IDS),
        service=found.anchor.service,
        route=route(spans),
        model=found.model,
        service_version=service_version(found.anchor, spans),
        prompt_version=prompt_version(found.anchor, spans),
        convention=convention,
        end_time_unix_nano=found.anchor.end_ns or max(s.end_ns for s in spans),
        conversation_id=conversation_id(spans),
    )


def _strings(spans: Sequence[Span], key: str) -> tuple[str, ...]:
    """A ragpulse attribute holding a JSON list of strings (the last span that has it wins); anything
    else is the app's mistake, named in the dead-letter reason."""
    strings: tuple[str, ...] = ()
    for span in spans:
        raw = text(span, key)
        if raw is not None:
            value = parse_json(span, key, raw)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ExtractionError("wrong_type", f"{key} is not a JSON list of strings")
            strings = tuple(value)
    return strings


__all__ = [
    "CONVENTIONS",
    "UNREADABLE",
    "ExtractionConfig",
    "ExtractionError",
    "Found",
    "Reading",
    "explain",
    "extract",
    "read",
    "require",
]
