"""`ragpulse inspect` as a user runs it: on files the OTel SDK wrote, and listening for a few seconds."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan

from collector.receivers.decode import decode, decode_logs, encode_json
from testkit.otlp import post_logs, post_traces
from testkit.process import free_port
from testkit.rag_traces import Collect, RagCase, make_spans, provider

REPO = Path(__file__).resolve().parents[2]


def inspect(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", "inspect", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def json_lines(stdout: str) -> dict[str, dict]:
    return {(report := json.loads(line))["trace_id"]: report for line in stdout.splitlines() if line}


def trace_id(spans: list[ReadableSpan]) -> str:
    return format(spans[0].context.trace_id, "032x")


def plain_spans(**attributes: object) -> list[ReadableSpan]:
    """A trace that is not RAG: an HTTP handler and a database call."""
    collect = Collect()
    tracer = provider(collect).get_tracer("app")
    with tracer.start_as_current_span("GET /health") as root:
        root.set_attributes({"http.route": "/health", **attributes})  # type: ignore[dict-item]
        with tracer.start_as_current_span("SELECT") as db:
            db.set_attribute("db.system", "postgresql")
    return collect.spans


def test_protobuf_file_every_field_of_the_records(tmp_path: Path) -> None:
    case = RagCase(query="When was the tower built?", route="/ask", model="gpt-4o-mini")
    openinference, gen_ai = make_spans("openinference", case), make_spans("gen_ai", case, service="kb")
    path = tmp_path / "traces.pb"
    path.write_bytes(encode_spans(openinference + gen_ai).SerializeToString())

    text = inspect(path)
    assert text.returncode == 0, text.stderr
    assert f"trace {trace_id(openinference)}: 3 span(s); matched openinference" in text.stdout
    assert f"trace {trace_id(gen_ai)}: 3 span(s); matched gen_ai" in text.stdout
    assert "query:    When was the tower built?" in text.stdout
    assert "service=kb route=/ask model=gpt-4o-mini" in text.stdout
    assert "[doc-1] score=0.910 The Eiffel Tower was completed in 1889" in text.stdout
    assert "response: The Eiffel Tower was completed in 1889." in text.stdout

    reports = json_lines(inspect(path, "--json").stdout)
    report = reports[trace_id(openinference)]
    assert report["spans"] == 3 and report["conventions"] == ["openinference"] and report["error"] is None
    (record,) = report["records"]
    assert record["query"] == case.query and record["response"] == case.response
    assert record["service"] == "rag-app" and record["route"] == "/ask" and record["model"] == case.model
    assert [(n["id"], n["score"]) for n in record["nodes"]] == [(i, s) for i, _, s in case.nodes]
    assert all(len(n["text"]) <= 120 for n in record["nodes"])  # passages cut for reading


def test_json_and_json_lines_files(tmp_path: Path) -> None:
    """OTLP/JSON (hex ids), and the Collector's file exporter: one JSON document per line."""
    first, second = make_spans("openllmetry"), make_spans("ragpulse")
    single = tmp_path / "one.json"
    single.write_bytes(encode_json(decode(encode_spans(first).SerializeToString())))
    lines = tmp_path / "exported.jsonl"
    lines.write_bytes(
        b"\n".join(encode_json(decode(encode_spans(s).SerializeToString())) for s in (first, second)) + b"\n"
    )
    reports = json_lines(inspect(single, "--json").stdout)
    assert reports[trace_id(first)]["conventions"] == ["openllmetry"]
    result = inspect(lines, "--json")
    assert result.returncode == 0, result.stderr
    reports = json_lines(result.stdout)
    assert {r["conventions"][0] for r in reports.values()} == {"openllmetry", "ragpulse"}
    assert reports[trace_id(first)]["spans"] == 3  # the same trace on two lines is one trace


def chat_with_message_logs() -> tuple[list[ReadableSpan], bytes]:
    """A GenAI chat span whose messages are log records (openai-v2 instrumentation with content on)."""
    collect, logs = Collect(), InMemoryLogRecordExporter()
    resource = Resource.create({"service.name": "chat-app"})
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    logger = logger_provider.get_logger("opentelemetry.instrumentation.openai_v2")
    with provider(collect, "chat-app").get_tracer("openai_v2").start_as_current_span("chat m") as span:
        span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"})
        context = "Answer from the context.\n\n[kb-1] The Eiffel Tower was completed in 1889 for the fair."
        logger.emit(event_name="gen_ai.system.message", body={"content": context})
        logger.emit(event_name="gen_ai.user.message", body={"content": "When was the tower completed?"})
        logger.emit(
            event_name="gen_ai.choice",
            body={"index": 0, "message": {"role": "assistant", "content": "In 1889."}},
        )
    logger_provider.shutdown()
    return collect.spans, encode_logs(logs.get_finished_logs()).SerializeToString()


def test_log_records_join_their_spans_protobuf_and_json(tmp_path: Path) -> None:
    spans, logs = chat_with_message_logs()
    (tmp_path / "traces.pb").write_bytes(encode_spans(spans).SerializeToString())
    (tmp_path / "app-logs.pb").write_bytes(logs)  # protobuf: logs by the file name
    (tmp_path / "capture.json").write_bytes(encode_json(decode_logs(logs)))  # JSON: by its resourceLogs
    for logs_file in ("app-logs.pb", "capture.json"):
        result = inspect(tmp_path / "traces.pb", tmp_path / logs_file)
        assert result.returncode == 0, result.stderr
        assert f"trace {trace_id(spans)}: 1 span(s), 3 log event(s) joined; matched gen_ai" in result.stdout
        assert "[kb-1] score=- The Eiffel Tower was completed in 1889" in result.stdout
        assert "response: In 1889." in result.stdout


def test_trace_without_rag_data_says_what_was_looked_for(tmp_path: Path) -> None:
    spans = plain_spans()
    path = tmp_path / "health.pb"
    path.write_bytes(encode_spans(spans).SerializeToString())
    result = inspect(path)
    assert result.returncode == 0
    assert f"trace {trace_id(spans)}: 2 span(s)\n  no RAG record:" in result.stdout
    for looked_for in (
        "openinference.span.kind",
        "gen_ai.retrieval.documents",
        "traceloop.entity",
        "rag.query",
    ):
        assert looked_for in result.stdout
    (report,) = json_lines(inspect(path, "--json").stdout).values()
    assert report["records"] == [] and report["notes"] and report["error"] is None


def test_invalid_trace_shows_what_would_be_dead_lettered(tmp_path: Path) -> None:
    path = tmp_path / "bad.pb"
    path.write_bytes(encode_spans(plain_spans(**{"rag.query": 7, "rag.response": "a"})).SerializeToString())
    result = inspect(path)
    assert result.returncode == 0
    assert "invalid, would be dead-lettered: wrong_type: rag.query" in result.stdout


def test_malformed_files_one_line_each_exit_1_and_the_good_file_still_reported(tmp_path: Path) -> None:
    good = tmp_path / "good.pb"
    spans = make_spans("openinference")
    good.write_bytes(encode_spans(spans).SerializeToString())
    bad = {
        "garbage.pb": b"\x0a\xff\xff\xff\xff\x0f garbage",
        "truncated.json": encode_json(decode(good.read_bytes()))[:-20],
        "deep.json": b'{"resourceSpans":' * 100_000,
        "empty.pb": b"",
        "notes.txt": "Grüße, not OTLP at all\n".encode(),
    }
    for name, payload in bad.items():
        (tmp_path / name).write_bytes(payload)
    result = inspect(good, *(tmp_path / name for name in bad), tmp_path / "missing.pb")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ragpulse inspect: ")]
    assert len(errors) == len(bad) + 1, result.stderr
    for name in [*bad, "missing.pb"]:
        assert any(line.startswith(f"ragpulse inspect: {tmp_path / name}: ") for line in errors), name
    assert f"trace {trace_id(spans)}: 3 span(s); matched openinference" in result.stdout


def test_usage_errors() -> None:
    assert inspect().returncode == 2
    assert inspect("x.pb", "--listen", "1").returncode == 2


def test_listen_reports_what_arrived(tmp_path: Path) -> None:
    port = free_port()
    command = ["inspect", "--listen", "6", "--json", "--otlp-port", str(port), "--otlp-grpc-port", "-1"]
    process = subprocess.Popen(
        [sys.executable, "-m", "collector.commands.cli", *command],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "inspect did not listen"
                time.sleep(0.1)
        spans = make_spans("openinference")
        chat, logs = chat_with_message_logs()
        assert post_traces(port, encode_spans(spans + chat).SerializeToString())[0] == 200
        assert post_logs(port, logs)[0] == 200
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr
    reports = json_lines(stdout)
    assert (
        reports[trace_id(spans)]["conventions"] == ["openinference"]
        and reports[trace_id(spans)]["spans"] == 3
    )
    assert reports[trace_id(chat)]["log_events"] == 3 and reports[trace_id(chat)]["conventions"] == ["gen_ai"]
