"""The product end to end: `ragpulse run` on a real broker, /metrics, evaluation spans, restarts, overload."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import psutil
import pytest
from kafka.structs import TopicPartition

from collector.commands.demo_corpus import TOPICS
from collector.pipeline.deadletter import LogDeadLetters
from collector.receivers.otlp import OtlpConfig
from collector.receivers.otlp_http import OtlpHttpReceiver
from ragpulse_sdk import KafkaSpanExporter
from testkit.collector_runner import wait_for
from testkit.kafka_read import committed_offsets, end_offsets, read_topic
from testkit.openai_server import ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess, http_status
from testkit.rag_traces import RagCase, encode, make_spans, native, provider
from testkit.scrape import scrape


def _produce(bootstrap: str, topic: str, total: int, hallucinated: int) -> None:
    """`total` native RAG traces through KafkaSpanExporter; the first `hallucinated` invent facts."""
    exporter = KafkaSpanExporter(bootstrap, topic)
    tracer_provider = provider(exporter, service="shop-assistant")
    for i in range(total):
        topic_case = TOPICS[i % len(TOPICS)]
        invented = i < hallucinated
        case = RagCase(
            query=topic_case.question,
            nodes=[(f"kb-{j}", text, 0.9) for j, text in enumerate(topic_case.passages)],
            response=topic_case.invented if invented else topic_case.grounded,
            route="/hallucinated" if invented else "/grounded",
        )
        native(tracer_provider, case)
    exporter.shutdown()


class Capture:
    """A real OTLP/HTTP endpoint (ragpulse's own receiver) collecting the evaluation spans."""

    def __init__(self) -> None:
        self.spans = []
        self.receiver = OtlpHttpReceiver(OtlpConfig(port=0), LogDeadLetters())

    def __enter__(self) -> Capture:
        self.receiver.start(lambda received: self.spans.extend(received.spans))
        return self

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.receiver.port}/v1/traces"

    def __exit__(self, *exc: object) -> None:
        self.receiver.shutdown()


def _values(bootstrap: str, topic: str) -> list[bytes]:
    return [record.value for record in read_topic(bootstrap, topic)]


def test_200_traces_30_hallucinated_end_to_end(kafka_bootstrap: str, kafka_topic) -> None:
    topic = kafka_topic(partitions=2)
    _produce(kafka_bootstrap, topic, total=200, hallucinated=30)
    with (
        Capture() as capture,
        RagpulseProcess(
            "--kafka-bootstrap",
            kafka_bootstrap,
            "--topic",
            topic,
            "--quiet-period",
            "0.3",
            env={"RAGPULSE_OTEL_EXPORT__ENDPOINT": capture.endpoint},
        ) as ragpulse,
    ):
        wait_for(
            lambda: (
                scrape(ragpulse.metrics_port).value("ragpulse_evaluations_total", metric="faithfulness")
                >= 200
            ),
            180,
            "200 faithfulness evaluations",
        )
        metrics = scrape(ragpulse.metrics_port)
        wait_for(
            lambda: (
                sum(1 for s in capture.spans if s.attributes.get("gen_ai.evaluation.name") == "faithfulness")
                >= 200
            ),
            60,
            "200 faithfulness evaluation spans",
        )
    assert metrics.value("ragpulse_evaluations_total", metric="faithfulness") == 200
    assert metrics.value("ragpulse_evaluations_total", metric="faithfulness", route="/hallucinated") == 30
    grounded = metrics.mean_score("faithfulness", route="/grounded")
    hallucinated = metrics.mean_score("faithfulness", route="/hallucinated")
    print(f"faithfulness mean: grounded {grounded:.3f}, hallucinated {hallucinated:.3f}")
    assert hallucinated < grounded - 0.3
    assert (
        metrics.value(
            "ragpulse_evaluations_total", metric="faithfulness", route="/hallucinated", outcome="failed"
        )
        >= 25
    )
    assert metrics.value("ragpulse_sampling_decisions_total", decision="sampled") == 200
    # every failed evaluation has a cause; the invented numbers and years contradict a passage
    failed = metrics.value("ragpulse_evaluations_total", metric="faithfulness", outcome="failed")
    assert metrics.value("ragpulse_failures_total", metric="faithfulness") == failed
    assert metrics.value("ragpulse_failures_total", metric="faithfulness", cause="contradicted_claim") >= 12
    # exemplars carry the ids of evaluated traces; evaluation spans sit in those traces under the anchor
    spans = [s for s in capture.spans if s.attributes.get("gen_ai.evaluation.name") == "faithfulness"]
    evaluated_traces = {s.trace_id for s in spans}
    assert len(evaluated_traces) == 200
    exemplar_ids = metrics.exemplar_trace_ids()
    assert exemplar_ids and exemplar_ids <= evaluated_traces
    for span in spans:
        assert span.parent_span_id and span.raw.links[0].span_id.hex() == span.parent_span_id
        assert span.attributes["gen_ai.evaluation.score.label"] in ("passed", "failed")
        assert 0.0 <= span.attributes["gen_ai.evaluation.score.value"] <= 1.0


def test_restart_after_sigkill_loses_no_sampled_trace(kafka_bootstrap: str, kafka_topic) -> None:
    topic, results = kafka_topic(partitions=2), kafka_topic()
    _produce(kafka_bootstrap, topic, total=150, hallucinated=0)
    args = (
        "--kafka-bootstrap",
        kafka_bootstrap,
        "--topic",
        topic,
        "--group-id",
        f"g-{topic}",
        "--quiet-period",
        "0.3",
    )
    # A short session timeout, so the group does not wait 45 s for the killed member before rebalancing.
    env = {
        "RAGPULSE_KAFKA__OPTIONS": '{"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000}',
        "RAGPULSE_RESULTS__BOOTSTRAP_SERVERS": kafka_bootstrap,
        "RAGPULSE_RESULTS__TOPIC": results,
        "RAGPULSE_EVALUATION__WORKERS": "1",
    }
    # The first replica commits too rarely to commit anything before it is killed: the second re-reads
    # every record, including those whose scores are already on the results topic.
    first = RagpulseProcess(*args, env={**env, "RAGPULSE_KAFKA__COMMIT_INTERVAL_S": "600"}).start()
    group, partitions = f"g-{topic}", [TopicPartition(topic, p) for p in range(2)]

    def results_by_trace() -> dict[str, set[str]]:
        metrics: dict[str, set[str]] = defaultdict(set)
        for value in _values(kafka_bootstrap, results):
            result = json.loads(value)
            metrics[result["trace_id"]].add(result["metric"])
        return metrics

    # Wait for scores that reached the topic, not just /metrics: only those can be read back.
    wait_for(
        lambda: sum("faithfulness" in m for m in results_by_trace().values()) >= 20,
        120,
        "some scores on the results topic before the kill",
    )
    first.kill()  # SIGKILL mid-stream: no graceful shutdown, no final commit
    assert sum(committed_offsets(kafka_bootstrap, group, partitions).values()) == 0
    at_kill = results_by_trace()  # final: the killed replica writes nothing more
    with RagpulseProcess(*args, env=env) as second:
        # Every record read again and done: the second replica committed up to the end of the topic
        # (scored traces may all be on the topic already, before it even joined the group).
        ends = sum(end_offsets(kafka_bootstrap, partitions).values())
        wait_for(
            lambda: sum(committed_offsets(kafka_bootstrap, group, partitions).values()) == ends,
            180,
            "every record read again and committed",
        )
        scrape_duplicates = scrape(second.metrics_port).value("ragpulse_dropped_total", reason="duplicate")
        assert second.stop() == 0
    records = [json.loads(v) for v in _values(kafka_bootstrap, results)]
    faithfulness = [r for r in records if r["metric"] == "faithfulness"]
    final = results_by_trace()
    # skipped: the re-read traces all of whose scores were on the topic at the kill (a kill between two
    # of one trace's results leaves the rest to score)
    complete_at_kill = sum(at_kill[trace] >= final[trace] for trace in at_kill)
    print(
        f"faithfulness results: {len(faithfulness)} for 150 traces; {len(at_kill)} traces had scores at "
        f"the kill, {complete_at_kill} all of them; skipped as duplicates: {scrape_duplicates:.0f}"
    )
    assert len({r["trace_id"] for r in faithfulness}) == 150  # none lost
    # and none scored twice: the restarted replica read the results topic back into its duplicate
    # filter, so re-read records whose scores had reached the topic were skipped
    assert len(faithfulness) == 150
    assert complete_at_kill > 0
    assert scrape_duplicates == complete_at_kill


@pytest.mark.timeout(240)
def test_overload_sheds_counts_and_stays_healthy() -> None:
    with (
        ScriptedOpenAIServer(latency_s=2.0) as judge,
        RagpulseProcess(
            "--quiet-period",
            "0.2",
            "--judge-base-url",
            judge.base_url,
            "--judge-model",
            "slow-judge",
            env={
                "RAGPULSE_EVALUATION__QUEUE_SIZE": "10",
                "RAGPULSE_EVALUATION__WORKERS": "2",
                "RAGPULSE_SAMPLING__METRICS": '["faithfulness"]',
                "OPENAI_API_KEY": "test-key-not-secret",
            },
        ) as ragpulse,
    ):
        for _ in range(400):
            body = gzip.compress(encode(make_spans("ragpulse")))
            assert post_traces(ragpulse.otlp_port, body, encoding="gzip")[0] == 200
        wait_for(
            lambda: scrape(ragpulse.metrics_port).value("ragpulse_dropped_total", reason="overload") > 0,
            60,
            "shed records",
        )
        metrics = scrape(ragpulse.metrics_port)
        rss_mb = psutil.Process(ragpulse.process.pid).memory_info().rss / 2**20
        assert http_status(f"{ragpulse.metrics_url}/healthz") == 200
        assert metrics.value("ragpulse_queue_depth") <= 10
        print(
            f"overload: dropped {metrics.value('ragpulse_dropped_total', reason='overload'):.0f}, "
            f"rss {rss_mb:.0f} MiB"
        )
        assert rss_mb < 400

        wait_for(
            lambda: (
                scrape(ragpulse.metrics_port).value("ragpulse_sampling_decisions_total", decision="sampled")
                == 400
            ),
            30,
            "all 400 traces sampled",
        )
        final = scrape(ragpulse.metrics_port)
        shed, evaluated = (
            final.value("ragpulse_dropped_total", reason="overload"),
            final.value("ragpulse_evaluations_total", metric="faithfulness"),
        )
        assert shed + evaluated + final.value("ragpulse_queue_depth") <= 400  # the rest is in flight
        assert shed >= 400 - 10 - 2 - evaluated - 2  # queue 10, 2 workers: everything else was shed
