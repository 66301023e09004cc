"""The one mapping from a `RagRecord` to the evaluators' `TestCase`: sampling reads which fields it
fills, the evaluator scores it.

Without ground-truth contexts, `context` falls back to the retrieved passages: a live service has
no ground truth, and hallucination in production means contradicting what was retrieved. The nodes'
ids are always the retrieved ids (whoever made them: a uuid the instrumentation generated is still
an id); the ranking metrics run only on traces that also name reference ids.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.records import RagRecord
from evaluators import CaseField, TestCase, Turn


def to_test_case(record: RagRecord) -> TestCase:
    """The test case the judge scores (id = trace id). Built once per record, by the sampler."""
    passages = [node.text for node in record.nodes]
    return TestCase(
        input=record.query,
        actual_output=record.response,
        retrieval_context=passages or None,
        expected_output=record.expected_output,
        baseline_output=record.baseline_output,
        context=list(record.reference_contexts) or passages or None,
        retrieved_context_ids=[node.id for node in record.nodes] or None,
        reference_context_ids=list(record.reference_context_ids) or None,
        id=record.trace_id,
    )


def to_conversation_case(turns: Sequence[RagRecord]) -> TestCase:
    """A conversation's case: each record is a user turn (its query) and an assistant turn (its response,
    with what was retrieved for it). Only `turns` is filled, so only conversational metrics run on it;
    id = the last turn's trace id, where the scores are reported."""
    messages: list[Turn] = []
    for record in turns:
        passages = [node.text for node in record.nodes] or None
        if record.query.strip():
            messages.append(Turn(role="user", content=record.query))
        messages.append(Turn(role="assistant", content=record.response, retrieval_context=passages))
    return TestCase(turns=messages, id=turns[-1].trace_id if turns else None)


def filled_fields(case: TestCase) -> frozenset[CaseField]:
    """The fields a case has (blank texts count as missing): which metrics can run on it."""
    return frozenset(field for field in CaseField if case.has(field))
