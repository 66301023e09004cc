"""`POST /v1/logs`: GenAI message log records from the real SDK exporter, joined to their span."""

from __future__ import annotations

import gzip

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter

from collector.metrics import LOG_RECORDS_RECEIVED
from collector.pipeline.offsets import NoAck
from collector.receivers.decode import decode, encode_json
from collector.receivers.otlp import OtlpConfig
from collector.receivers.otlp_http import OtlpHttpReceiver
from collector.spans import flatten
from collector.stages import Received
from testkit.genai_logs import ANSWER, QUESTION, assembled_spans, chat_with_message_logs, message_events
from testkit.otlp import post_logs
from testkit.rag_traces import Collect, encode
from tests.collector.test_otlp_receiver import RecordedDeadLetters


class _Receiver:
    def __init__(self) -> None:
        self.batches: list[Received] = []
        self.dead_letters = RecordedDeadLetters()
        self.receiver = OtlpHttpReceiver(OtlpConfig(port=0), self.dead_letters)

    def __enter__(self) -> _Receiver:
        self.receiver.start(self.batches.append)
        return self

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.receiver.port}{path}"

    def __exit__(self, *exc: object) -> None:
        self.receiver.shutdown()


def test_sdk_log_exporter_messages_join_their_span() -> None:
    """The SDK's OTLP/HTTP exporters (gzip) send spans and logs separately; the assembler joins them."""
    before = LOG_RECORDS_RECEIVED.labels("otlp")._value.get()
    with _Receiver() as otlp:
        trace_id, span_id = chat_with_message_logs(
            OTLPSpanExporter(endpoint=otlp.url("/v1/traces"), compression=Compression.Gzip),
            OTLPLogExporter(endpoint=otlp.url("/v1/logs"), compression=Compression.Gzip),
        )
    assert otlp.dead_letters.letters == []
    logs = [log for batch in otlp.batches for log in batch.logs]
    assert {log.trace_id for log in logs} == {trace_id}  # the record without trace context is unused
    span = assembled_spans(otlp.batches)[span_id]
    assert message_events(span) == [
        ("gen_ai.user.message", {"content": QUESTION}),
        (
            "gen_ai.choice",
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}},
        ),
    ]
    assert span.events[0].attributes == {"gen_ai.system": "openai"}
    assert LOG_RECORDS_RECEIVED.labels("otlp")._value.get() - before == 2


def test_json_logs_and_error_answers() -> None:
    spans, records = Collect(), InMemoryLogRecordExporter()
    _, span_id = chat_with_message_logs(spans, records)
    request = encode_logs(records.get_finished_logs())
    with _Receiver() as otlp:
        port = otlp.receiver.port
        assert post_logs(port, encode_json(request), "application/json") == (200, b"{}")
        compressed = gzip.compress(request.SerializeToString())
        assert post_logs(port, compressed, "application/x-protobuf", "gzip")[0] == 200
        assert post_logs(port, b"\x0a\xff\xff\xff\xff\x0f", "application/x-protobuf")[0] == 400
        assert post_logs(port, b"logs", "text/plain")[0] == 415
        bad = encode_logs(records.get_finished_logs())
        bad.resource_logs[0].scope_logs[0].log_records[1].trace_id = b"\x01\x02"  # the user message
        status, body = post_logs(port, bad.SerializeToString(), "application/x-protobuf")
    assert status == 200
    partial = ExportLogsServiceResponse.FromString(body).partial_success
    assert partial.rejected_log_records == 1 and "invalid trace or span id" in partial.error_message
    assert [(reason, source) for reason, _, source in otlp.dead_letters.letters] == [
        ("malformed_protobuf", "otlp/logs")
    ]
    trace = Received(spans=flatten(decode(encode(spans.spans))), ack=NoAck(), source="test")
    span = assembled_spans([*otlp.batches, trace])[span_id]
    names = [name for name, _ in message_events(span)]
    # JSON, then gzip protobuf, then the partial request's remaining choice
    assert names == ["gen_ai.user.message", "gen_ai.choice"] * 2 + ["gen_ai.choice"]
