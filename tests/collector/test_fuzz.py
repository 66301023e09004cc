"""Property-based tests: no input makes decode, extract or the assembler fail outside their contracts.

A trace that crashes the collector once crashes it on every replica after every restart (Kafka
hands the same records back), so "never raises anything else" is checked on arbitrary input, not on
the shapes we happened to think of: the real attribute keys of every convention holding every kind
of value OTLP's AnyValue can carry, JSON that is valid, invalid, encoded twice or nested 10,000
deep, random parent links, span events and log records. Spans are built both directly and as real
OTLP bytes (protobuf and JSON) through `decode` + `flatten`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1 import trace_pb2

from collector import conventions
from collector.assembly.assembler import AssemblyConfig, TraceAssembler
from collector.conventions import ExtractionError, extract
from collector.judging.cases import filled_fields, to_test_case
from collector.receivers.decode import DecodeError, Encoding, decode, decode_logs, encode_json
from collector.records import RagRecord
from collector.spans import Event, LogEvent, Span, any_value, flatten, flatten_logs
from testkit.hostile import nested_protobuf

FUZZ = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
SPAN_IDS = [f"{i:016x}" for i in range(1, 6)]


def words(text: str) -> list[str]:
    """Long vocabularies read better as one string."""
    return text.split()


# --- values -------------------------------------------------------------------------------
WORDS = st.sampled_from(
    [
        *words(
            "CHAIN RETRIEVER LLM AGENT RERANKER chain chat retrieval vector_db_retrieve text_completion "
            "application/json workflow task user system assistant text"
        ),
        "Question: what?",
        "[1] passage\n\nQuery: q",
        "",
        " ",
    ]
)
DOC_KEYS = st.sampled_from(
    words(
        "id id_ content text page_content document score metadata node role parts type message documents "
        "results args kwargs question query_str output answer nodes prompt messages"
    )
)
INT64 = st.integers(-(2**63), 2**63 - 1)
SCALARS = st.one_of(st.text(max_size=30), INT64, st.floats(), st.booleans(), st.binary(max_size=12), WORDS)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=4) | st.dictionaries(DOC_KEYS | st.text(max_size=6), inner, max_size=4)


# What OTLP AnyValue carries (None = an unset AnyValue); nesting stays within protobuf's limit.
ANY = st.recursive(SCALARS | st.none(), _containers, max_leaves=12)
JSONABLE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30) | WORDS,
    _containers,
    max_leaves=15,
)
DEEP_OPENERS = words('[ {"node": {"document": {"content": {"documents": {"parts": {"message": {"id":')


def deep_json(opener: str, depth: int, core: str = '"x"') -> str:
    return opener * depth + core + ("]" if opener == "[" else "}") * depth


@st.composite
def json_text(draw: st.DrawFn) -> str:
    """JSON as instrumentations write it, and as they should not: invalid, twice encoded, very deep."""
    text = json.dumps(draw(JSONABLE))
    kind = draw(st.sampled_from(["valid", "twice", "thrice", "truncated", "deep", "huge_int", "garbage"]))
    if kind == "twice":
        return json.dumps(text)
    if kind == "thrice":
        return json.dumps(json.dumps(text))
    if kind == "truncated":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "deep":
        opener = draw(st.sampled_from(DEEP_OPENERS))
        depth = draw(st.sampled_from([50, 900, 990, 1_500, 10_000]))
        return draw(st.sampled_from(["", "["])) + deep_json(opener, depth, text)
    if kind == "huge_int":  # json.loads raises ValueError (not JSONDecodeError) past 4,300 digits
        return draw(st.sampled_from(["[%s]", '[{"score": %s, "content": "x"}]', "%s"])) % ("7" * 5_000)
    if kind == "garbage":
        return draw(st.sampled_from(["{", "[", '"'])) + draw(st.text(max_size=20))
    return text


VALUE = st.one_of(ANY, json_text(), WORDS)

# --- attribute maps and traces -----------------------------------------------------------------
_DOC = ("id", "content", "score", "metadata")
_MSG = words("role content contents.0.message_content.type contents.0.message_content.text")
KEYS = [
    *words(
        "openinference.span.kind input.value input.mime_type output.value output.mime_type llm.model_name "
        "llm.prompts reranker.query session.id gen_ai.conversation.id"
    ),
    *[f"retrieval.documents.{n}.document.{f}" for n in ("0", "1", "01", "9999999") for f in _DOC],
    *[f"reranker.output_documents.{n}.document.{f}" for n in "01" for f in _DOC],
    *[f"llm.{d}_messages.{n}.message.{f}" for d in ("input", "output") for n in "01" for f in _MSG],
    *words(
        "gen_ai.operation.name gen_ai.input.messages gen_ai.output.messages gen_ai.system_instructions "
        "gen_ai.retrieval.documents gen_ai.retrieval.query.text gen_ai.request.model gen_ai.response.model"
    ),
    *[f"gen_ai.{p}.{n}.{f}" for p in ("prompt", "completion") for n in "01" for f in ("role", "content")],
    *words(
        "traceloop.entity.input traceloop.entity.output traceloop.span.kind traceloop.entity.name "
        "llm.request.type traceloop.association.properties.session_id rag.query rag.response "
        "rag.retrieval.documents rag.model rag.route rag.expected_output rag.reference_contexts "
        "rag.reference_context_ids rag.conversation_id http.route url.template"
    ),
]
_Q = "When was it built?"
_DOCS = json.dumps([{"id": "d1", "content": "It was built in 1889.", "score": 0.9, "metadata": '{"a": 1}'}])
_OUT = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "In 1889."}]}])
_IN = json.dumps([{"role": "user", "parts": [{"type": "text", "content": _Q}]}])
_DOC0 = "retrieval.documents.0.document."
_MSG0 = "llm.output_messages.0.message."
# Valid traces of each convention (root first, the others its children), to mutate into near misses.
SKELETONS: list[list[dict[str, Any]]] = [
    [
        {"openinference.span.kind": "CHAIN", "input.value": json.dumps({"query_str": _Q}),
         "input.mime_type": "application/json", "output.value": "In 1889.", "session.id": "s1"},
        {"openinference.span.kind": "RETRIEVER", "input.value": _Q, _DOC0 + "id": "d1",
         _DOC0 + "content": "Built in 1889.", _DOC0 + "score": 0.5,
         _DOC0 + "metadata": '{"file": "a.txt"}'},
        {"openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
         "llm.input_messages.0.message.content": _Q, _MSG0 + "role": "assistant", "llm.model_name": "m",
         _MSG0 + "contents.0.message_content.type": "text",
         _MSG0 + "contents.0.message_content.text": "1889"},
    ],
    [
        {"http.route": "/ask"},
        {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": _Q,
         "gen_ai.retrieval.documents": _DOCS},
        {"gen_ai.operation.name": "chat", "gen_ai.input.messages": _IN, "gen_ai.output.messages": _OUT},
    ],
    [
        {"traceloop.span.kind": "workflow", "traceloop.entity.name": "rag",
         "traceloop.entity.output": '"1889"',
         "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"question": _Q}})},
        {"traceloop.span.kind": "task", "traceloop.entity.name": "VectorIndexRetriever",
         "traceloop.entity.output": json.dumps([json.dumps({"node": {"id_": "n1", "text": "1889"}})])},
        {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": _Q,
         "gen_ai.completion.0.content": "1889"},
    ],
    [{"gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "[1] Built in 1889.\n\n[2] Tall.",
      "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": _Q,
      "gen_ai.completion.0.content": "1889"}],
    [{"rag.query": _Q, "rag.response": "1889", "rag.retrieval.documents": _DOCS, "rag.route": "/ask"}],
]  # fmt: skip
TEMPLATES = [*(attributes for skeleton in SKELETONS for attributes in skeleton), {}]
EVENT_NAMES = st.sampled_from(
    [
        *words("gen_ai.user.message gen_ai.system.message gen_ai.assistant.message gen_ai.tool.message"),
        *words("gen_ai.choice gen_ai.client.inference.operation.details exception"),
        "",
    ]
)
EVENT_KEYS = st.sampled_from(
    words("gen_ai.input.messages gen_ai.output.messages gen_ai.system_instructions event.name input.value")
)
MESSAGE_BODY = st.fixed_dictionaries({"content": VALUE, "role": VALUE})
BODIES = st.none() | VALUE | MESSAGE_BODY | st.fixed_dictionaries({"message": VALUE | MESSAGE_BODY})


def span(
    span_id: str,
    parent: str,
    start: int,
    end: int,
    attributes: dict[str, Any],
    resource: dict[str, Any] | None = None,
    events: list[Event] | None = None,
    name: str = "s",
    trace_id: str = TRACE_ID,
) -> Span:
    """A Span as `flatten` makes it; the raw protobuf parts stay empty (only dead letters read them)."""
    return Span(
        trace_id, span_id, parent, name, start, end, attributes, resource or {}, trace_pb2.Span(), Resource(),
        events or [],
    )  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key in draw(st.sets(st.sampled_from(sorted(base) or ["-"]), max_size=2)):
        out.pop(key, None)
    out.update(draw(st.dictionaries(st.sampled_from(KEYS), VALUE, max_size=3)))
    return out


@st.composite
def spans(draw: st.DrawFn) -> list[Span]:
    """A mutated convention trace or a random mix; ids may collide, parents be missing, self or cyclic."""
    if draw(st.booleans()):
        bases = draw(st.sampled_from(SKELETONS))
    else:
        bases = draw(st.lists(st.sampled_from(TEMPLATES), min_size=1, max_size=5))
    times = st.integers(0, 100) | st.integers(0, 2**64 - 1)
    out = []
    for i, base in enumerate(bases):
        scrambled = draw(st.booleans())
        span_id = draw(st.sampled_from(SPAN_IDS)) if scrambled else SPAN_IDS[i]
        parent = (
            draw(st.sampled_from(["", *SPAN_IDS, "f" * 16])) if scrambled else ("" if i == 0 else SPAN_IDS[0])
        )
        start, end = (draw(times), draw(times)) if scrambled else (10 * i, 100 if i == 0 else 10 * i + 5)
        events = [
            Event(name, draw(st.dictionaries(EVENT_KEYS, VALUE, max_size=2)), draw(BODIES))
            for name in draw(st.lists(EVENT_NAMES, max_size=3))
        ]
        resource = {"service.name": draw(st.just("rag-app") | ANY)}
        name = draw(st.sampled_from(["query", "retrieve", "VectorIndexRetriever.task", "chat m", "x"]))
        attributes = draw(mutated(base))
        out.append(span(span_id, parent, start, end, attributes, resource, events, name))
    return out


# --- invariants -------------------------------------------------------------------------------
def check_extract(trace_id: str, trace: list[Span]) -> None:
    """The only outcomes allowed: records that satisfy the invariants, none, or ExtractionError."""
    try:
        records = extract(trace_id, trace)
    except ExtractionError as exc:
        assert isinstance(exc.reason, str) and exc.reason.replace("_", "").isalpha(), exc.reason
        return
    assert isinstance(records, list)
    for record in records:
        check_record(record, trace_id, {s.span_id for s in trace})
    explain = getattr(conventions, "explain", None)
    if explain is not None and not records:
        try:
            notes = explain(trace)
        except ExtractionError:
            return
        assert all(isinstance(n, str) for n in notes)


def check_record(record: RagRecord, trace_id: str, span_ids: set[str]) -> None:
    assert isinstance(record, RagRecord)
    assert record.trace_id == trace_id and record.anchor_span_id in span_ids
    for name in (
        "query",
        "response",
        "service",
        "route",
        "model",
        "service_version",
        "prompt_version",
        "convention",
        "conversation_id",
    ):
        assert isinstance(getattr(record, name), str), (name, getattr(record, name))
    assert record.expected_output is None or isinstance(record.expected_output, str)
    assert all(isinstance(c, str) for c in record.reference_contexts)
    assert all(isinstance(i, str) for i in record.reference_context_ids)
    for node in record.nodes:
        assert isinstance(node.id, str) and isinstance(node.text, str)
        assert node.score is None or (isinstance(node.score, float) and not math.isnan(node.score))
    json.dumps(record.summary(120))
    filled_fields(to_test_case(record))  # the sampler builds the case: that must not fail either


def same(a: Any, b: Any) -> bool:
    """Equality where NaN equals NaN (attributes survive a decode round trip unchanged)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# --- extract on spans built directly -------------------------------------------------------------
@FUZZ
@given(trace=spans())
def test_extract_spans_never_raises_outside_contract(trace: list[Span]) -> None:
    check_extract(TRACE_ID, trace)


def test_extract_deep_json_in_every_key() -> None:
    """JSON nested 990 deep parses (just under the interpreter's limit), 10,000 deep does not: both kinds."""
    for skeleton in SKELETONS:
        for key in KEYS:
            for opener in DEEP_OPENERS:
                for depth in (990, 10_000):
                    deep = deep_json(opener, depth)
                    trace = [
                        span(SPAN_IDS[i], SPAN_IDS[0] if i else "", 10 * i, 10 * i + 5, {**a, key: deep})
                        for i, a in enumerate(skeleton)
                    ]
                    check_extract(TRACE_ID, trace)


# --- the same through real OTLP bytes -------------------------------------------------------------
def to_any(value: Any, out: AnyValue) -> None:
    if isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        out.int_value = value
    elif isinstance(value, float):
        out.double_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, bytes):
        out.bytes_value = value
    elif isinstance(value, list):
        out.array_value.SetInParent()
        for item in value:
            to_any(item, out.array_value.values.add())
    elif isinstance(value, dict):
        out.kvlist_value.SetInParent()
        for key, item in value.items():
            to_any(item, out.kvlist_value.values.add(key=key).value)


def key_values(mapping: dict[str, Any]) -> list[KeyValue]:
    out = []
    for key, value in mapping.items():
        kv = KeyValue(key=key)
        to_any(value, kv.value)
        out.append(kv)
    return out


def to_otlp(trace: list[Span]) -> tuple[trace_pb2.TracesData, logs_pb2.LogsData]:
    """Span events stay span events; log-record events (with a body) become OTLP log records."""
    traces, logs = trace_pb2.TracesData(), logs_pb2.LogsData()
    for source in trace:
        resource_spans = traces.resource_spans.add()
        resource_spans.resource.attributes.extend(key_values(source.resource))
        raw = resource_spans.scope_spans.add().spans.add(
            trace_id=bytes.fromhex(source.trace_id),
            span_id=bytes.fromhex(source.span_id),
            parent_span_id=bytes.fromhex(source.parent_span_id),
            name=source.name,
            start_time_unix_nano=source.start_ns,
            end_time_unix_nano=source.end_ns,
        )
        raw.attributes.extend(key_values(source.attributes))
        scope_logs = logs.resource_logs.add().scope_logs.add()
        for event in source.events:
            if event.body is None:
                raw.events.add(name=event.name).attributes.extend(key_values(event.attributes))
                continue
            record = scope_logs.log_records.add(
                trace_id=raw.trace_id, span_id=raw.span_id, event_name=event.name
            )
            record.attributes.extend(key_values(event.attributes))
            to_any(event.body, record.body)
    return traces, logs


@FUZZ
@given(trace=spans(), encoding=st.sampled_from([Encoding.OTLP_PROTO, Encoding.OTLP_JSON]))
def test_extract_after_decode_and_assembly(trace: list[Span], encoding: Encoding) -> None:
    traces, logs = to_otlp(trace)
    if encoding is Encoding.OTLP_PROTO:
        decoded = decode(traces.SerializeToString(), encoding)
        decoded_logs = decode_logs(logs.SerializeToString(), encoding)
    else:
        decoded = decode(encode_json(traces), encoding)
        decoded_logs = decode_logs(encode_json(logs), encoding)  # type: ignore[arg-type]
    flat, log_events = flatten(decoded), flatten_logs(decoded_logs)
    assert [(s.span_id, s.parent_span_id, s.name) for s in flat] == [
        (s.span_id, s.parent_span_id, s.name) for s in trace
    ]
    assert all(same(a.attributes, b.attributes) for a, b in zip(flat, trace, strict=True))
    assembler = TraceAssembler()
    assembler.add(flat, _Ack(), 0.0, log_events)
    (assembled,) = assembler.drain()
    check_extract(assembled.trace_id, assembled.spans)


# --- the decoder ------------------------------------------------------------------------------
DECODERS = (decode, decode_logs)
ENCODINGS = st.sampled_from(list(Encoding))
OTLP_JSON_KEYS = st.sampled_from(
    words(
        "resourceSpans resourceLogs scopeSpans scopeLogs spans logRecords traceId spanId parentSpanId "
        "attributes key value stringValue intValue doubleValue boolValue bytesValue arrayValue kvlistValue "
        "values body events name resource startTimeUnixNano kind status code eventName"
    )
)
OTLP_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7", "zz", "AAAA", "1e999"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(OTLP_JSON_KEYS, inner, max_size=4),
    max_leaves=20,
)


def check_decode(payload: bytes, encoding: Encoding) -> None:
    for decoder in DECODERS:
        try:
            decoder(payload, encoding, 1_000_000)
        except DecodeError as exc:
            assert isinstance(exc.reason, str) and exc.reason
            json.dumps(exc.detail)


@FUZZ
@given(payload=st.binary(max_size=200), encoding=ENCODINGS)
def test_decode_arbitrary_bytes(payload: bytes, encoding: Encoding) -> None:
    check_decode(payload, encoding)


@FUZZ
@given(document=OTLP_JSON, encoding=ENCODINGS, huge=st.booleans())
def test_decode_json_of_random_shape(document: Any, encoding: Encoding, huge: bool) -> None:
    text = json.dumps(document)
    if huge:  # an integer literal of 5,000 digits where OTLP has a number
        huge_span = {"startTimeUnixNano": 7, "name": "x"}
        text = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [huge_span]}]}], "x": document})
        text = text.replace('"startTimeUnixNano": 7', '"startTimeUnixNano": ' + "7" * 5_000)
    check_decode(text.encode(), encoding)


@FUZZ
@given(trace=spans(), cut=st.floats(0, 1), encoding=ENCODINGS)
def test_decode_truncated_valid_payloads(trace: list[Span], cut: float, encoding: Encoding) -> None:
    traces, logs = to_otlp(trace)
    for payload in (traces.SerializeToString(), logs.SerializeToString(), encode_json(traces)):
        check_decode(payload[: int(len(payload) * cut)], encoding)


def test_decode_deep_nesting_100000_levels() -> None:
    """Too deep for any OTLP reader: refused with DecodeError, never half-read, never a RecursionError."""
    depth = 100_000
    json_payloads = (
        b"[" * depth + b"]" * depth,
        b'{"resourceSpans":' * depth + b"{}" + b"}" * depth,
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "k", "value": '
        + b'{"arrayValue": {"values": [' * depth
        + b"]}}" * depth
        + b"}]}]}]}]}",
    )
    for decoder, payloads in (
        (decode, (*json_payloads, nested_protobuf(depth))),
        (decode_logs, (*json_payloads, nested_protobuf(depth, logs=True))),
    ):
        for payload in payloads:
            for encoding in Encoding:
                check_decode(payload, encoding)
            with pytest.raises(DecodeError):
                decoder(payload)
    for logs in (False, True):  # within protobuf's depth limit: decoded whole
        decoded = decode_logs(nested_protobuf(40, logs)) if logs else decode(nested_protobuf(40))
        record = decoded.resource_logs[0].scope_logs[0].log_records[0] if logs else None
        value = any_value(record.body) if record else flatten(decoded)[0].attributes[""]
        levels = 0
        while value:
            value, levels = value[0], levels + 1
        assert levels == 40


# --- the assembler --------------------------------------------------------------------------------
class _Ack:
    def __init__(self) -> None:
        self.holds = 0

    def hold(self) -> None:
        self.holds += 1

    def release(self) -> None:
        self.holds -= 1


BATCH = st.lists(
    st.tuples(st.sampled_from("abc"), st.sampled_from(SPAN_IDS[:3]), st.sampled_from(["", *SPAN_IDS[:3]])),
    max_size=6,
)
LOGS = st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from(SPAN_IDS[:4])), max_size=3)


@FUZZ
@given(
    batches=st.lists(st.tuples(BATCH, LOGS, st.floats(0, 3), st.booleans()), max_size=8),
    config=st.builds(
        AssemblyConfig,
        quiet_period_s=st.floats(0, 2),
        max_age_s=st.floats(0.1, 5),
        max_spans_per_trace=st.integers(1, 5),
        max_traces=st.integers(1, 4),
        max_spans=st.integers(1, 10),
    ),
)
def test_assembler_conserves_spans_and_holds(batches: list, config: AssemblyConfig) -> None:
    """Every span comes out exactly once, in a trace of its own id that holds its record's ack."""
    assembler, now, closed = TraceAssembler(config), 0.0, []
    sources: dict[int, _Ack] = {}  # id(span) -> the ack of the record it came in
    added: list[Span] = []
    logged: dict[int, tuple[str, str]] = {}  # id(event) -> the trace and span it names
    for batch, logs, step, expire in batches:
        ack, now = _Ack(), now + step
        ack.hold()  # the receiver's hand-over hold, released once the batch is buffered
        new = [span(s, p, 0, 0, {}, trace_id=t * 32) for t, s, p in batch]
        sources.update((id(s), ack) for s in new)
        added += new
        events = [LogEvent(t * 32, s, Event("gen_ai.choice", {}, {"message": {}})) for t, s in logs]
        logged.update((id(e.event), (e.trace_id, e.span_id)) for e in events)
        assembler.add(new, ack, now, events)
        ack.release()
        if expire:
            closed += assembler.expire(now)
    closed += assembler.drain()
    assert len(assembler) == 0 and assembler.span_count == 0
    out = [s for trace in closed for s in trace.spans]
    assert sorted(map(id, out)) == sorted(map(id, added))  # conserved: none lost, none twice
    for trace in closed:
        assert all(s.trace_id == trace.trace_id for s in trace.spans)
        for s in trace.spans:  # at-least-once: the record stays held while any of its spans is pending
            assert any(a is sources[id(s)] for a in trace.acks), (trace.close_reason, s.span_id)
    holds = [a for trace in closed for a in trace.acks]
    assert all(a.holds == sum(1 for h in holds if h is a) for a in set(sources.values()))
    attached = [(id(e), s.trace_id, s.span_id) for s in out for e in s.events]
    assert len({e for e, _, _ in attached}) == len(attached)  # a log record joins one span at most
    assert all((t, sid) == logged[e] for e, t, sid in attached)
