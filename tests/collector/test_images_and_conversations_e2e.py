"""Issue 15's end-to-end test: through one real `ragpulse run`, a trace with image passages (the real
OpenInference capture of the `openai` SDK sending `image_url` parts) and a three-turn conversation (one
OpenInference `session.id`), judged by the scripted OpenAI-compatible server with vision, the scores
read from /metrics as Prometheus would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.metrics.conversation import KNOWLEDGE_RETENTION_INSTRUCTION
from testkit.chat_request import images_of
from testkit.collector_runner import wait_for
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.scrape import Scrape, scrape
from tests.collector.test_conversations import EXCHANGES, _conversation_spans


def expected_service(metrics: Scrape) -> str:
    """The service name the instrumented app reported (not the conversation's shop-assistant)."""
    services = metrics.by_label("ragpulse_evaluations_total", "service")
    (service,) = [name for name in services if name != "shop-assistant"]
    return service


CAPTURE = Path(__file__).parents[1] / "data" / "instrumentation" / "openai-images-openinference"
METRICS = ["faithfulness", "multimodal_faithfulness", "knowledge_retention", "conversation_relevancy"]


@pytest.mark.timeout(240)
def test_an_image_trace_and_a_conversation_through_ragpulse_run(tmp_path: Path) -> None:
    expected = json.loads((CAPTURE / "expected.json").read_text())
    planted = expected[1]["response"]  # the answer with invented numbers and a name
    config = tmp_path / "ragpulse.yaml"
    config.write_text(f"sampling:\n  metrics: {json.dumps(METRICS)}\n  conversations: {{idle_s: 1.0}}\n")
    script = JudgeScript(
        task_verdicts={
            ("visual_supported", planted[:40]): "no",
            ("satisfies", EXCHANGES[1][1], "", KNOWLEDGE_RETENTION_INSTRUCTION[:40]): "no",
        }
    )
    with (
        ScriptedOpenAIServer(script) as judge,
        RagpulseProcess(
            "--config", str(config), "--quiet-period", "0.3", "--judge-base-url", judge.base_url
        ) as ragpulse,
    ):
        port = ragpulse.metrics_port
        status, _ = post_traces(port=ragpulse.otlp_port, body=(CAPTURE / "traces.json").read_bytes(),
                                content_type="application/json")  # fmt: skip
        assert status == 200
        assert post_traces(ragpulse.otlp_port, _conversation_spans())[0] == 200
        wait_for(
            lambda: (
                scrape(port).value("ragpulse_evaluations_total", metric="multimodal_faithfulness") >= 2
                and scrape(port).value("ragpulse_evaluations_total", metric="knowledge_retention") >= 1
            ),
            120,
            "the image traces and the quiet conversation judged",
        )
        metrics = scrape(port)
        vision = [r for r in judge.chat_requests if r.operation.startswith("visual_")]
    # the capture's grounded answer 1, its planted one 0; the conversation's turns are text-only records,
    # which the metrics about images leave alone (faithfulness judges them)
    assert metrics.mean_score("multimodal_faithfulness", service=expected_service(metrics)) == 0.5
    assert metrics.value("ragpulse_evaluations_total", metric="multimodal_faithfulness") == 2
    assert (
        metrics.value(
            "ragpulse_evaluations_total", metric="multimodal_faithfulness", service="shop-assistant"
        )
        == 0
    )
    assert metrics.mean_score("knowledge_retention") == pytest.approx(2 / 3)
    assert metrics.mean_score("conversation_relevancy") == 1.0
    assert metrics.value("ragpulse_evaluations_total", metric="faithfulness") == 5  # 2 image traces + 3 turns
    # the images went to the judge as images: two image_url parts (a data URI and a URL) for each of the
    # capture's two answers; the conversation's turns were judged on text alone
    pictured = [images_of(r.body["messages"][-1]) for r in vision if images_of(r.body["messages"][-1])]
    assert len(pictured) == 2 and all(len(urls) == 2 for urls in pictured)
    assert all(urls[0].startswith("data:image/") and urls[1].startswith("http") for urls in pictured)
