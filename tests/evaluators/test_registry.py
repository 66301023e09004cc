"""What a metric needs, by name (the collector's sampling asks before making any metric) and per instance."""

from __future__ import annotations

import pytest

from evaluators import CaseField, GEval, MissingFieldError, create_metric, metric_names, required_inputs


def test_required_inputs_by_name_match_the_metric_made_from_that_name() -> None:
    for name in metric_names():
        assert required_inputs(name) == create_metric(name).required_inputs, name
    assert required_inputs("faithfulness") == (CaseField.ACTUAL_OUTPUT, CaseField.RETRIEVAL_CONTEXT)
    assert required_inputs("aspect_harmfulness") == (CaseField.ACTUAL_OUTPUT,)


def test_an_unknown_name_is_refused_like_create_metric() -> None:
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        required_inputs("nope")
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        create_metric("nope")


def test_geval_needs_its_evaluation_params_and_checks_them_before_judging() -> None:
    metric = GEval(
        "fact check", criteria="Facts match?", evaluation_params=["actual_output", "expected_output"]
    )
    assert metric.required_inputs == (CaseField.ACTUAL_OUTPUT, CaseField.EXPECTED_OUTPUT)
    assert GEval.required_fields == ()  # the class declaration is untouched by an instance
    with pytest.raises(MissingFieldError, match="expected_output"):
        metric.measure({"input": "q", "actual_output": "a"})  # no judge: it fails before any call
