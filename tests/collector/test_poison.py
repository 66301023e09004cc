"""Poison records on the real broker: dead-lettered once, committed past, and the process lives on.

A record that crashes the collector is re-read by every replica after every restart, so one bad
trace can stop a whole consumer group. OpenInference traces whose document metadata is a JSON
string (as the spec defines it) once did that; they must now be scored like any other. The poisons
here stay invalid whatever the conventions learn: retrieval documents nested 10,000 deep, and
records nested 100,000 deep in JSON and in protobuf. Each is followed by good traces.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from kafka import KafkaProducer
from kafka.structs import TopicPartition
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider

from collector.pipeline.deadletter import REASON_HEADER
from testkit.collector_runner import wait_for
from testkit.hostile import nested_protobuf
from testkit.kafka_read import committed_offsets, read_topic
from testkit.process import RagpulseProcess, http_status
from testkit.rag_traces import Collect, RagCase, encode, make_spans, provider
from testkit.scrape import scrape

DEEP = 10_000
RECORD_DEPTH = 100_000


def openinference_with_metadata(tp: TracerProvider, case: RagCase, metadata: str) -> None:
    """CHAIN root, RETRIEVER and LLM spans as the LlamaIndex instrumentor records them, metadata included."""
    tracer = tp.get_tracer("openinference.instrumentation.llama_index")
    with tracer.start_as_current_span("query") as chain:
        chain.set_attributes({"openinference.span.kind": "CHAIN", "input.value": case.query})
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attributes({"openinference.span.kind": "RETRIEVER", "input.value": case.query})
            for i, (node_id, text, score) in enumerate(case.nodes):
                prefix = f"retrieval.documents.{i}.document."
                retriever.set_attributes(
                    {
                        prefix + "id": node_id,
                        prefix + "content": text,
                        prefix + "score": score,
                        prefix + "metadata": metadata,  # a JSON string, per the OpenInference spec
                    }
                )
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attributes(
                {
                    "openinference.span.kind": "LLM",
                    "llm.model_name": case.model,
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": case.query,
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": case.response,
                }
            )
        chain.set_attribute("output.value", case.response)


def spans_of(build: Callable[..., None], service: str, *args: object) -> list[ReadableSpan]:
    collect = Collect()
    build(provider(collect, service=service), RagCase(), *args)
    return collect.spans


def deep_documents(tp: TracerProvider, case: RagCase) -> None:
    """ragpulse's own attributes, the documents JSON nested 10,000 deep: the app's error, dead-lettered."""
    with tp.get_tracer("app").start_as_current_span("answer") as span:
        span.set_attributes(
            {
                "rag.query": case.query,
                "rag.response": case.response,
                "rag.retrieval.documents": "[" * DEEP + "]" * DEEP,
            }
        )


def records() -> tuple[list[tuple[str, bytes]], set[str]]:
    """(kind, value) in produce order, and the services of the good traces."""
    metadata = json.dumps({"file_name": "eiffel.txt", "page_label": "3", "tags": ["paris"]})
    good = {
        "good-0": encode(spans_of(openinference_with_metadata, "good-0", metadata)),
        "good-1": encode(spans_of(openinference_with_metadata, "good-1", '{"a":' * DEEP + "1" + "}" * DEEP)),
        "good-2": encode(make_spans("ragpulse", service="good-2")),
        "good-3": encode(spans_of(openinference_with_metadata, "good-3", json.dumps(metadata))),
        "good-4": encode(make_spans("gen_ai", service="good-4")),
        "good-5": encode(spans_of(openinference_with_metadata, "good-5", metadata)),
    }
    poison = {
        "invalid_retrieval_json": encode(spans_of(deep_documents, "poison")),
        "malformed_json": b'{"resourceSpans": ' + b"[" * RECORD_DEPTH + b"]" * RECORD_DEPTH + b"}",
        "malformed_protobuf": nested_protobuf(RECORD_DEPTH),
    }
    order = [
        ("good-0", good),
        ("invalid_retrieval_json", poison),
        ("good-1", good),
        ("good-2", good),
        ("malformed_json", poison),
        ("good-3", good),
        ("malformed_protobuf", poison),
        ("good-4", good),
        ("good-5", good),
    ]
    return [(name, source[name]) for name, source in order], set(good)


def dead_letters(bootstrap: str, topic: str) -> list[str]:
    """The reason header of every record now on the dead-letter topic."""
    return [dict(record.headers)[REASON_HEADER].decode() for record in read_topic(bootstrap, topic)]


def test_poison_is_dead_lettered_once_committed_past_and_the_process_lives_on(
    kafka_bootstrap: str, kafka_topic
) -> None:
    topic = kafka_topic()
    group = f"poison-{topic}"
    produced, good = records()
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for _, value in produced:  # one at a time: the offsets are the produce order
        producer.send(topic, value).get(timeout=30)
    producer.close()
    args = (
        "--kafka-bootstrap",
        kafka_bootstrap,
        "--topic",
        topic,
        "--group-id",
        group,
        "--quiet-period",
        "0.3",
    )
    env = {"RAGPULSE_KAFKA__LOGS_TOPIC": f"{topic}-logs"}  # no other test's log records
    with RagpulseProcess(*args, env=env) as ragpulse:
        assert ragpulse.process is not None
        pid = ragpulse.process.pid

        def scored() -> set[str]:
            metrics = scrape(ragpulse.metrics_port)
            return {
                s
                for s in good
                if metrics.value("ragpulse_evaluations_total", service=s, metric="faithfulness")
            }

        wait_for(lambda: scored() == good, 120, f"every good trace scored ({sorted(good)})")
        partition = TopicPartition(topic, 0)
        wait_for(
            lambda: committed_offsets(kafka_bootstrap, group, [partition])[partition] == len(produced),
            60,
            "a commit past every record",
        )
        reasons = dead_letters(kafka_bootstrap, f"{topic}.dlq")
        time.sleep(3)  # several commit intervals: nothing is read, dead-lettered or scored again
        assert dead_letters(kafka_bootstrap, f"{topic}.dlq") == reasons
        metrics = scrape(ragpulse.metrics_port)
        assert ragpulse.process.poll() is None and ragpulse.process.pid == pid  # never restarted
        assert http_status(f"{ragpulse.metrics_url}/healthz") == 200
    assert sorted(reasons) == ["invalid_retrieval_json", "malformed_json", "malformed_protobuf"]
    for reason in reasons:
        assert metrics.value("ragpulse_dead_letters_total", reason=reason) == 1
    assert metrics.value("ragpulse_dead_letters_total", reason="internal_error") == 0
    for service in good:  # each good trace scored exactly once
        assert metrics.value("ragpulse_evaluations_total", service=service, metric="faithfulness") == 1
