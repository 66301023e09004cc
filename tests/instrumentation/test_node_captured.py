"""Extraction on the committed captures of the Node apps (fast, no Node needed).

The live suite (test_node_conformance.py) proves the current npm packages end to end; these captures,
taken from the same apps (refresh: `python -m tests.instrumentation.node.harness`), pin each shape, as
test_captured.py does for the Python apps: one exact record per question, none for the index build.
"""

from __future__ import annotations

import pytest

from tests.instrumentation.node import harness
from tests.instrumentation.test_captured import check_extracted_exactly
from tests.instrumentation.test_node_conformance import NODE_EXPECTATIONS, combinations


@pytest.mark.parametrize("combination", combinations())
def test_captured_node_trace_is_extracted_exactly(combination: tuple[str, str]) -> None:
    combo = harness.combination_name(*combination)
    assert combo in NODE_EXPECTATIONS
    check_extracted_exactly(harness.CAPTURES / combo, combo)
