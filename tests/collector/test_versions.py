"""Versions on records (`service.version`, the prompt version) and the bounded `version` label."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Span as SdkSpan
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from prometheus_client.openmetrics.exposition import generate_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from pydantic import ValidationError

from collector.assembly.assembler import TraceAssembler
from collector.conventions import extract
from collector.exporters.kafka_results import result_document
from collector.exporters.prometheus import PrometheusExporter
from collector.exporters.verdicts import VerdictLimits
from collector.labels import LabelPolicy, LabelsConfig, VersionPolicy
from collector.metrics import EVALUATION_SCORE, EVALUATIONS, REGISTRY, VERSION_FIRST_SEEN
from collector.page.exporter import stored_evaluation
from collector.page.store import Store
from collector.pipeline.offsets import NoAck
from collector.receivers.decode import decode, decode_logs
from collector.records import RagRecord
from collector.spans import Span, flatten, flatten_logs
from collector.stages import Evaluation, Outcome
from testkit.rag_traces import BUILDERS, Collect, RagCase, encode
from testkit.scrape import Scrape
from tests.instrumentation.capture import FIXTURES


class _SetOnStart(SpanProcessor):
    """Sets attributes on every span as it starts, as an app's own span processor would."""

    def __init__(self, attributes: dict[str, str | int]) -> None:
        self.attributes = attributes

    def on_start(self, span: SdkSpan, parent_context: Context | None = None) -> None:
        span.set_attributes(self.attributes)


def _record_from_sdk(
    convention: str, resource: dict[str, str], attributes: dict[str, str | int] | None = None
) -> RagRecord:
    collect = Collect()
    provider = TracerProvider(resource=Resource.create({"service.name": "rag-app", **resource}))
    if attributes:
        provider.add_span_processor(_SetOnStart(attributes))
    provider.add_span_processor(SimpleSpanProcessor(collect))
    BUILDERS[convention](provider, RagCase())
    spans = flatten(decode(encode(collect.spans)))
    (record,) = extract(spans[0].trace_id, spans)
    return record


@pytest.mark.parametrize("convention", sorted(BUILDERS))
def test_service_version_comes_from_the_resource_under_every_convention(convention: str) -> None:
    record = _record_from_sdk(convention, {"service.version": "2.3.1"})
    assert (record.service_version, record.prompt_version) == ("2.3.1", "")
    assert record.summary()["service_version"] == "2.3.1"
    assert _record_from_sdk(convention, {}).service_version == ""


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"llm.prompt_template.version": "tpl-7"}, "tpl-7"),  # OpenInference
        ({"traceloop.prompt.version": 3}, "3"),  # OpenLLMetry: Traceloop's registry versions are ints
        ({"ragpulse.prompt.version": "answer-v2"}, "answer-v2"),
        ({"ragpulse.prompt.version": "mine", "llm.prompt_template.version": "theirs"}, "theirs"),
    ],
)
def test_prompt_version_is_the_first_present_attribute(
    attributes: dict[str, str | int], expected: str
) -> None:
    for convention in BUILDERS:
        record = _record_from_sdk(convention, {"service.version": "1.0"}, attributes)
        assert record.prompt_version == expected, convention
        assert record.summary()["prompt_version"] == expected


def test_an_odd_version_value_never_rejects_the_trace() -> None:
    record = _record_from_sdk("ragpulse", {}, {"ragpulse.prompt.version": True})  # type: ignore[dict-item]
    assert record.prompt_version == ""


def _captured(combo: str) -> list[tuple[str, list[Span]]]:
    folder = FIXTURES / combo
    spans = flatten(decode((folder / "traces.json").read_bytes()))
    logs = flatten_logs(decode_logs((folder / "logs.json").read_bytes()))
    assembler = TraceAssembler()
    assembler.add(spans, NoAck(), 0.0, logs)
    return [(t.trace_id, t.spans) for t in assembler.drain()]


@pytest.mark.parametrize(
    ("combo", "llm_attribute", "value"),
    [
        ("langchain-openinference", "llm.prompt_template.version", "rag-prompt-4"),
        ("llamaindex-openinference", "llm.prompt_template.version", "rag-prompt-4"),
        ("llamaindex-openllmetry", "traceloop.prompt.version", 4),
    ],
)
def test_real_captures_with_versions_added(combo: str, llm_attribute: str, value: str | int) -> None:
    """The committed captures carry no version (their apps set none): add what a versioned app sends,
    the resource's `service.version` and the prompt version on its LLM spans, to the real span shapes."""
    found = []
    for trace_id, spans in _captured(combo):
        for span in spans:
            span.resource["service.version"] = "2025.06.1"
            if any(k.startswith(("llm.", "gen_ai.")) for k in span.attributes):
                span.attributes[llm_attribute] = value
        found += extract(trace_id, spans)
    assert found
    assert {(r.service_version, r.prompt_version) for r in found} == {("2025.06.1", str(value))}


def _evaluation(metric: str, outcome: Outcome = Outcome.PASSED, score: float | None = 1.0) -> Evaluation:
    return Evaluation(metric, outcome, score, "", 0.5, False, "offline", "m")


def _rec(i: int, **fields: str) -> RagRecord:
    return RagRecord(f"{i:032x}", f"{i:016x}", "q", "a", service="shop", route="/ask", **fields)  # type: ignore[arg-type]


def _versions(metric: str) -> set[str]:
    return {
        sample.labels["version"]
        for family in (*EVALUATIONS.collect(), *EVALUATION_SCORE.collect())
        for sample in family.samples
        if sample.labels.get("metric") == metric
    }


def _first_seen(service: str) -> dict[str, float]:
    return {
        s.labels["version"]: s.value
        for family in VERSION_FIRST_SEEN.collect()
        for s in family.samples
        if s.labels["service"] == service
    }


@pytest.mark.parametrize(
    ("version_from", "expected"),
    [
        ("service_version", "1.2.0"),
        ("prompt_version", "p9"),
        ("model", "gpt-x"),
        ("service_version", "unknown"),
    ],
)
def test_the_version_label_reads_the_configured_field(version_from: str, expected: str) -> None:
    metric = f"versions_from_{version_from}_{expected}"
    exporter = PrometheusExporter(
        LabelPolicy(), LabelPolicy(), versions=VersionPolicy(), version_from=version_from
    )
    fields = {"service_version": "1.2.0", "prompt_version": "p9", "model": "gpt-x"}
    if expected == "unknown":
        fields = {}
    exporter.export(_rec(1, **fields), [_evaluation(metric)])
    assert _versions(metric) == {expected}


def _scraped(metric: str) -> Scrape:
    """/metrics as Prometheus reads it (OpenMetrics text, parsed), this test's metric only."""
    text = generate_latest(REGISTRY).decode()
    samples = [s for family in text_string_to_metric_families(text) for s in family.samples]
    return Scrape([s for s in samples if s.labels.get("metric") == metric])


def test_a_version_beyond_max_versions_is_other_until_a_version_goes_idle() -> None:
    """A newcomer never removes a series that may still change: it is `other` while `max_versions`
    versions are active; once versions have gone `version_idle_s` without a score, their series go (their
    final values were scraped long ago) and the next new deploy gets its own label."""
    metric, service = "versions_idle", "idling-shop"
    now = [1000.0]
    policy = VersionPolicy(max_versions=3, idle_s=3600.0)
    exporter = PrometheusExporter(LabelPolicy(), LabelPolicy(), versions=policy, clock=lambda: now[0])

    def export(version: str, at: float) -> None:
        now[0] = at
        record = RagRecord("a" * 32, "b" * 16, "q", "a", service=service, service_version=version)
        exporter.export(record, [_evaluation(metric), _evaluation(metric, Outcome.FAILED, 0.1)])

    for at, version in enumerate(("v1", "v2", "v3")):
        export(version, 1000.0 + 10 * at)
    export("v4", 1100.0)  # three versions active: v4 is `other`, nothing is removed
    assert _versions(metric) == {"v1", "v2", "v3", "other"}
    assert _scraped(metric).value("ragpulse_evaluations_total") == 8
    export("v3", 2000.0)  # v3 stays active; v1 and v2 are not scored again
    export("v4", 4700.0)  # v1 and v2 idle for an hour: their series go, v4 gets its own label
    assert _versions(metric) == {"v3", "v4", "other"}
    assert _first_seen(service) == {"v3": 1020.0, "v4": 4700.0}
    assert max(_first_seen(service), key=_first_seen(service).__getitem__) == "v4"  # the newest deploy
    export("v1", 4800.0)  # a rollback: a free slot, and its first sighting is remembered
    assert _versions(metric) == {"v1", "v3", "v4", "other"}
    assert max(_first_seen(service), key=_first_seen(service).__getitem__) == "v4"


def test_label_churn_keeps_every_count_with_bounded_series() -> None:
    """A distinct service, route and version on every record: the counts summed over /metrics are the
    evaluations made, and the series stop growing once the bounds are reached (before: 55 of 300)."""
    metric = "versions_churn"
    exporter = PrometheusExporter(LabelPolicy(), LabelPolicy(), 200, VersionPolicy(), clock=lambda: 1000.0)

    def export(first: int, count: int) -> Scrape:
        for i in range(first, first + count):
            labels = {"service": f"app-{i}", "route": f"/r{i}", "service_version": f"v{i}"}
            exporter.export(RagRecord(f"{i:032x}", f"{i:016x}", "q", "a", **labels), [_evaluation(metric)])  # type: ignore[arg-type]
        return _scraped(metric)

    after_300, after_3000 = export(0, 300), export(300, 2700)
    assert after_300.value("ragpulse_evaluations_total") == 300
    assert after_3000.value("ragpulse_evaluations_total") == 3000
    series = [
        len({tuple(sorted(s.labels.items())) for s in scrape.samples}) for scrape in (after_300, after_3000)
    ]
    assert series[0] == series[1] <= 51 * 26  # 50 services + other, one route and version each: 26 samples
    assert after_3000.by_label("ragpulse_evaluations_total", "version")["other"] == 3000 - 50


def test_an_allow_list_fixes_the_versions_and_maps_the_rest_to_other() -> None:
    metric = "versions_allow_list"
    policy = VersionPolicy.from_config(LabelsConfig(versions=["v1", "v2"]))
    exporter = PrometheusExporter(LabelPolicy(), LabelPolicy(), versions=policy)
    for i, version in enumerate(["v1", "v2", "v3", "v4", ""]):
        exporter.export(_rec(i, service_version=version), [_evaluation(metric)])
    assert _versions(metric) == {"v1", "v2", "other", "unknown"}


def test_labels_config_validates_the_version_settings() -> None:
    assert LabelsConfig().version_from == "service_version" and LabelsConfig().max_versions == 5
    with pytest.raises(ValidationError):
        LabelsConfig(version_from="build")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        LabelsConfig(max_versions=0)
    assert LabelsConfig().version_idle_s == 3600.0
    with pytest.raises(ValidationError):
        LabelsConfig(version_idle_s=5)  # shorter than a scrape interval could lose a count


def test_results_document_and_page_store_carry_the_versions(tmp_path: Path) -> None:
    record = _rec(7, service_version="1.4.0", prompt_version="p3")
    document = result_document(record, _evaluation("faithfulness"), 1_700_000_000.0)
    assert (document["service_version"], document["prompt_version"]) == ("1.4.0", "p3")
    assert result_document(_rec(8), _evaluation("faithfulness"), 0.0)["service_version"] is None
    json.dumps(document)

    store = Store(tmp_path / "page.db", clock=lambda: 1_700_000_000.0)
    assert (
        store.write(
            [stored_evaluation(record, _evaluation("faithfulness"), 1_700_000_000.0, VerdictLimits())]
        )
        == []
    )
    with store.reader() as db:
        row = db.execute("SELECT service_version, prompt_version FROM records").fetchone()
    assert tuple(row) == ("1.4.0", "p3")
    store.close()


def test_an_older_store_file_gains_the_version_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE records (id INTEGER PRIMARY KEY, trace_id TEXT NOT NULL, span_id TEXT NOT NULL, "
        "service TEXT NOT NULL, route TEXT NOT NULL, model TEXT NOT NULL, question TEXT, answer TEXT, "
        "evaluated_at REAL NOT NULL, UNIQUE (trace_id, span_id))"
    )
    old.execute("INSERT INTO records VALUES (1, 't', 's', 'shop', '/ask', 'm', 'q', 'a', 1.0)")
    old.commit()
    old.close()
    store = Store(path, clock=lambda: 2.0)
    record = _rec(9, service_version="2.0.0")
    assert store.write([stored_evaluation(record, _evaluation("faithfulness"), 2.0, VerdictLimits())]) == []
    with store.reader() as db:
        rows = db.execute("SELECT trace_id, service_version FROM records ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [("t", ""), (record.trace_id, "2.0.0")]
    store.close()


def test_the_page_filters_evaluations_by_version() -> None:
    from collector.page import queries

    store = Store(clock=lambda: 100.0)
    rows = [
        stored_evaluation(_rec(i, service_version=v), _evaluation("faithfulness"), 100.0, VerdictLimits())
        for i, v in enumerate(("v1", "v2", "v2"))
    ]
    assert store.write(rows) == []
    with store.reader() as db:
        found = queries.evaluations(db, queries.Filters.parse({"version": "v2"}), 100.0)
        assert [r["service_version"] for r in found] == ["v2", "v2"]
        assert queries.choices(db, 0.0)["version"] == ["v1", "v2"]
    store.close()
