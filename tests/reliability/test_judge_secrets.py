"""A judge URL with credentials (`http://user:pass@host/v1`) in the sidecar: httpx sends them as Basic
auth and logs the URL per request; a gateway answering 401 quotes the header back. Neither `user:pass`
nor its base64 may reach a log line, a results-topic document or an evaluation span."""

from __future__ import annotations

import base64
import json
import logging
import time

import pytest

from collector.exporters.kafka_results import result_document
from collector.exporters.otel_spans import evaluation_attributes
from collector.judging.build import build_evaluator
from collector.judging.config import JudgeConfig, MetricsConfig
from collector.records import RagRecord, RetrievedNode
from collector.stages import Outcome
from testkit.openai_server import ScriptedOpenAIServer

BASIC = base64.b64encode(b"user:pass").decode()


async def test_url_credentials_reach_no_log_line_document_or_span(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    record = RagRecord(
        trace_id="5" * 32,
        anchor_span_id="5" * 16,
        query="When was the Eiffel Tower completed?",
        response="The Eiffel Tower was completed in 1889.",
        nodes=(RetrievedNode("n0", "The Eiffel Tower was completed in March 1889.", 0.9),),
    )
    with ScriptedOpenAIServer() as server:
        server.failing = "401-echo"
        url = server.base_url.replace("http://", "http://user:pass@")
        evaluator = build_evaluator(JudgeConfig(base_url=url, max_retries=0), MetricsConfig(), workers=1)
        (evaluation,), _ = await evaluator.evaluate(record, ["faithfulness"])
        echoed = server.requests[0].reply
    assert f"Basic {BASIC}" in echoed  # the gateway quoted the credentials it refused
    assert evaluation.outcome is Outcome.ERROR and "HTTP 401" in evaluation.reason
    assert "HTTP Request: POST http://***@127.0.0.1" in caplog.text  # httpx's line, redacted
    document = json.dumps(result_document(record, evaluation, time.time()))
    span = json.dumps(evaluation_attributes(evaluation, 2000))
    assert "Basic [redacted]" in document and "Basic [redacted]" in span
    for output in (evaluation.reason, caplog.text, document, span):
        assert "user:pass" not in output and BASIC not in output and "pass@" not in output
