"""The test-case model accepts deepeval and ragas names; missing inputs name the field."""

from __future__ import annotations

import pytest

from evaluators import CaseField, Faithfulness, MissingFieldError, TestCase

DEEPEVAL = {
    "input": "What is AI?",
    "actual_output": "AI is artificial intelligence.",
    "retrieval_context": ["AI means artificial intelligence."],
    "expected_output": "Artificial intelligence.",
    "context": ["AI stands for artificial intelligence."],
}


@pytest.mark.parametrize(
    "names",
    [
        {
            "question": "input",
            "answer": "actual_output",
            "contexts": "retrieval_context",
            "ground_truth": "expected_output",
            "reference_contexts": "context",
        },
        {
            "user_input": "input",
            "response": "actual_output",
            "retrieved_contexts": "retrieval_context",
            "reference": "expected_output",
            "reference_contexts": "context",
        },
    ],
)
def test_ragas_names_map_onto_deepeval_names(names: dict[str, str]) -> None:
    case = TestCase.model_validate({ragas: DEEPEVAL[ours] for ragas, ours in names.items()})
    assert case == TestCase.model_validate(DEEPEVAL)


def test_contexts_from_csv_cells() -> None:
    assert TestCase(contexts='["a", "b"]').retrieval_context == ["a", "b"]
    assert TestCase(contexts="one passage").retrieval_context == ["one passage"]
    assert TestCase(contexts="  ").retrieval_context is None


def test_missing_field_is_named() -> None:
    case = TestCase(answer="Paris is in France.")
    with pytest.raises(MissingFieldError, match="retrieval_context") as raised:
        Faithfulness().measure(case, judge=object())  # the check happens before any judge call
    assert raised.value.field is CaseField.RETRIEVAL_CONTEXT


def test_blank_strings_count_as_missing() -> None:
    assert not TestCase(answer="   ").has(CaseField.ACTUAL_OUTPUT)
    assert not TestCase(contexts=["", " "]).has(CaseField.RETRIEVAL_CONTEXT)
