"""Images from real instrumentation: the `openai` SDK sends a chat completion whose user message holds
`image_url` parts (a data URI and a URL), the real OpenInference OpenAI instrumentation records it, and
ragpulse reads the images as image passages, which reach a vision judge as images.

The committed capture (tests/data/instrumentation/openai-images-openinference, refreshed with
`python -m tests.instrumentation.capture openai-images-openinference`) is read without the venv; the
live test runs the app in the instrumentation venv and reads what it exports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collector.conventions import explain, extract
from collector.judging.cases import to_test_case
from collector.records import RagRecord
from evaluators import OpenAIJudge, Outcome
from evaluators.images import is_image
from evaluators.metrics.multimodal import MultimodalFaithfulness
from testkit.captured import captured_traces
from testkit.chat_request import images_of
from testkit.openai_server import ScriptedOpenAIServer
from tests.instrumentation.capture import FIXTURES, IMAGE_COMBINATIONS, capture, combination_name
from tests.instrumentation.llm_server import ScriptedLLMServer

COMBO = combination_name(*IMAGE_COMBINATIONS[0])


def records_of(folder: Path) -> tuple[list[dict[str, Any]], dict[str, RagRecord]]:
    """(the app's expected.json, the record extracted from each of its questions' traces)."""
    expected = json.loads((folder / "expected.json").read_text())
    records = {}
    for trace in captured_traces(folder):
        found = extract(trace.trace_id, trace.spans)
        if trace.trace_id in {e["trace_id"] for e in expected}:
            assert len(found) == 1, explain(trace.spans)
            records[trace.trace_id] = found[0]
    return expected, records


def check_images_read(folder: Path) -> None:
    expected, records = records_of(folder)
    assert len(expected) == 2 and set(records) == {e["trace_id"] for e in expected}
    for item in expected:
        record = records[item["trace_id"]]
        assert (record.query, record.response) == (item["question"], item["response"])
        # The text passages from the system message, then the user message's images, in order.
        assert [n.text for n in record.nodes] == [p["text"] for p in item["passages"]]
        images = [(p["id"], p["text"]) for p in item["passages"] if p["id"].startswith("image-")]
        assert len(images) == 2 and all(is_image(text) for _, text in images)
        assert [(n.id, n.text) for n in record.nodes if is_image(n.text)] == images
        assert to_test_case(record).retrieval_context == [p["text"] for p in item["passages"]]


def test_the_committed_capture_gives_image_passages() -> None:
    check_images_read(FIXTURES / COMBO)


async def test_from_the_real_capture_to_a_vision_judge_request() -> None:
    expected, records = records_of(FIXTURES / COMBO)
    case = to_test_case(records[expected[0]["trace_id"]])
    with ScriptedOpenAIServer() as server:
        judge = OpenAIJudge("vision-model", base_url=server.base_url, cache_size=0)
        result = await MultimodalFaithfulness().a_measure(case, judge)
        assert result.outcome == Outcome.PASSED and result.details["image_passages"] == 2
        (request,) = server.chat_requests
        images = [p["text"] for p in expected[0]["passages"] if p["id"].startswith("image-")]
        assert images_of(request.body["messages"][1]) == images


@pytest.mark.instrumentation
def test_the_live_instrumentation_records_images_ragpulse_reads(
    instrumentation_venv: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    capture(instrumentation_venv, IMAGE_COMBINATIONS[0], llm_server.base_url, tmp_path)
    check_images_read(tmp_path)
