"""The failure -> test loop keeps its data, on every metric family: a real `ragpulse run` scores traces
that carry an expected answer, reference document ids, a baseline answer and a conversation id with its
LLM judge (the scripted OpenAI-compatible server, over real HTTP); `ragpulse export-cases` exports them
from the page's store file or from the results topic on a real broker; `ragpulse eval --config <the
sidecar's config>` re-judges the export with that same judge and the same custom criteria, measures
answer correctness, MRR, the custom criterion, faithfulness and the pairwise preference, and agrees
with production case by case.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from ragpulse_sdk import record_rag
from testkit.collector_runner import wait_for
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import Collect, encode
from testkit.scrape import scrape

NODES = [
    ("doc-1", "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.", 0.91),
    ("doc-2", "Gustave Eiffel's company designed and built the wrought-iron lattice tower.", 0.84),
    ("doc-3", "The tower is 330 metres tall and was the tallest structure until 1930.", 0.77),
]
# (question, answer, expected answer, reference document ids, baseline answer): the second answer
# invents its height (the judge is scripted to find it unsupported), misses the expected answer, and its
# reference document was retrieved last (MRR 1/3): production fails it on three metric families.
TRAFFIC = [
    ("When was the Eiffel Tower completed?", "It was completed in 1889.", "In 1889.", ["doc-1"], "1889."),
    ("How tall is the Eiffel Tower?", "The tower is 512 metres tall.", "330 metres.", ["doc-3"], "330 m."),
    ("Who built the Eiffel Tower?", "Eiffel's firm built it.", "Eiffel's firm.", ["doc-2"], "Eiffel."),
]  # fmt: skip
FAMILIES = {  # one metric of each family the sidecar scores on such traffic
    "faithfulness": "grounding (claims against the passages)",
    "answer_correctness": "reference (the expected answer)",
    "retrieval_mrr": "ranking (reference document ids)",
    "politeness": "custom criterion (G-Eval rubric)",
    "pairwise_preference": "comparison (the baseline answer)",
}
CONFIG = """
judge: {{base_url: "{base_url}", model: scripted}}
custom_metrics:
  politeness:
    kind: geval
    criteria: Is the answer polite and free of blame towards the user?
    evaluation_params: [input, actual_output]
    threshold: 0.6
sampling:
  metrics: [faithfulness, retrieval_mrr, politeness, pairwise_preference]
  reference_metrics: [answer_correctness]
metrics:
  options:
    faithfulness: {{threshold: 0.7}}
page:
  store_path: "{store}"
"""


def _trace(question: str, answer: str, expected: str, reference_ids: list[str], baseline: str) -> bytes:
    collect = Collect()
    resource = Resource.create({"service.name": "shop", "service.version": "v7"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(collect))
    with tracer_provider.get_tracer("app").start_as_current_span("answer") as span:
        record_rag(
            span,
            question,
            NODES,
            answer,
            expected_output=expected,
            reference_context_ids=reference_ids,
            baseline_output=baseline,
        )
        span.set_attribute("session.id", "conversation-42")
    return encode(collect.spans)


def _ragpulse(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", *args], capture_output=True, text=True, timeout=180
    )


def _outcomes(document: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(c["case_id"], r["name"]): r["outcome"] for c in document["cases"] for r in c["results"]}


@pytest.mark.parametrize("source", ["store", "results_topic"])
def test_export_and_eval_with_the_sidecars_config_agree_with_production(
    source: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store, config, cases = tmp_path / "page.db", tmp_path / "ragpulse.yaml", tmp_path / "cases.jsonl"
    env, source_args = {}, ["--store", str(store)]
    if source == "results_topic":
        bootstrap, topic = request.getfixturevalue("kafka_bootstrap"), request.getfixturevalue("topic")
        env = {"RAGPULSE_RESULTS__BOOTSTRAP_SERVERS": bootstrap, "RAGPULSE_RESULTS__TOPIC": topic}
        source_args = ["--kafka-bootstrap", bootstrap, "--results-topic", topic]
    script = JudgeScript(rubric_score=8, task_verdicts={("supported", "512 metres"): "no"})
    with ScriptedOpenAIServer(script) as judge:
        config.write_text(CONFIG.format(base_url=judge.base_url, store=store))
        with RagpulseProcess(
            "--config", str(config), "--quiet-period", "0.2", "--quiet", env=env
        ) as ragpulse:
            for traffic in TRAFFIC:
                assert post_traces(ragpulse.otlp_port, _trace(*traffic))[0] == 200

            def scored() -> bool:
                metrics = scrape(ragpulse.metrics_port)
                return all(
                    metrics.value("ragpulse_evaluations_total", metric=name) >= len(TRAFFIC)
                    for name in FAMILIES
                )

            wait_for(scored, 90, "every metric family scored online")
        production_calls = len(judge.chat_requests)

        exported = _ragpulse("export-cases", *source_args, "--all", "--out", str(cases))
        assert exported.returncode == 0, exported.stderr
        rows = [json.loads(line) for line in cases.read_text().splitlines()]
        assert len(rows) == len(TRAFFIC)
        by_question = {row["input"]: row for row in rows}
        for question, answer, expected, reference_ids, baseline in TRAFFIC:
            row = by_question[question]
            assert (row["actual_output"], row["expected_output"], row["baseline_output"]) == (
                answer,
                expected,
                baseline,
            )
            assert row["reference_context_ids"] == reference_ids
            assert row["retrieved_context_ids"] == ["doc-1", "doc-2", "doc-3"]
            assert row["context"] == row["retrieval_context"] == [text for _, text, _ in NODES]
            meta = row["metadata"]
            assert (meta["conversation_id"], meta["service_version"]) == ("conversation-42", "v7")
            assert set(meta["metrics"]) == set(FAMILIES)
            for name, entry in meta["metrics"].items():
                assert entry["outcome"] in ("passed", "failed"), (name, entry)
                assert (entry["judge"], entry["judge_model"]) == ("openai", "scripted"), name

        # CI: the export, the sidecar's config, no --metrics (those production scored), no --judge.
        report = tmp_path / "report.json"
        run = _ragpulse("eval", str(cases), "--config", str(config), "--json", str(report), "--no-progress")
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stderr.splitlines()[0] == f"judge: openai scripted at {judge.base_url} ({config})"
        assert len(judge.chat_requests) > production_calls  # re-judged over HTTP, not offline
    document = json.loads(report.read_text())
    outcomes = _outcomes(document)
    assert {name for _, name in outcomes} == set(FAMILIES)
    assert set(outcomes.values()) <= {"passed", "failed"}, outcomes  # every family measured
    production = {
        (row["id"], name): entry["outcome"]
        for row in rows
        for name, entry in row["metadata"]["metrics"].items()
    }
    assert outcomes == production  # case by case, metric by metric
    assert production[(by_question[TRAFFIC[1][0]]["id"], "faithfulness")] == "failed"
    assert production[(by_question[TRAFFIC[1][0]]["id"], "retrieval_mrr")] == "failed"
    assert production[(by_question[TRAFFIC[1][0]]["id"], "answer_correctness")] == "failed"
    assert document["production"] == {name: {"cases": 3, "same_outcome": 3} for name in sorted(FAMILIES)}
    assert "against production (judged by openai scripted)" in run.stdout
