"""The "Evaluation pipeline health" dashboard: is ragpulse keeping up with the spans it is sent?

Laid out in the order data flows (receivers -> assemble -> sample -> evaluate -> export), so an operator
reads left to right to find the stage where records pile up or get lost.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard

from grafana.generator.common import (
    label_variable,
    latency_quantiles,
    new_dashboard,
    query,
    rates_by,
    row,
    stat_panel,
    time_series,
)

UID = "ragpulse-pipeline"
INSTANCE = 'instance=~"$instance"'


def build() -> Dashboard:
    return (
        new_dashboard(
            UID,
            "Evaluation pipeline health",
            "ragpulse's own pipeline: spans in, traces assembled, sampling, queue, drops, lag, latency.",
        )
        .with_variable(label_variable("instance", "Instance", "label_values(ragpulse_build_info, instance)"))
        .with_row(row("Now"))
        .with_panel(
            stat_panel(
                "Spans in per second",
                "Spans received from Kafka and the OTLP receiver.",
                f"sum(rate(ragpulse_spans_received_total{{{INSTANCE}}}[5m]))",
                unit="reqps",
            )
        )
        .with_panel(
            stat_panel(
                "Evaluations per second",
                "Evaluations exported, all outcomes.",
                f"sum(rate(ragpulse_evaluations_total{{{INSTANCE}}}[5m]))",
                unit="reqps",
            )
        )
        .with_panel(
            stat_panel(
                "Queue depth",
                "Sampled traces waiting for the evaluator, all instances.",
                f"sum(ragpulse_queue_depth{{{INSTANCE}}})",
            )
        )
        .with_panel(
            stat_panel(
                "Consumer lag",
                "Records the consumer group has not read yet, all topics.",
                "sum(topic:ragpulse_kafka_consumer_lag:sum)",
            )
        )
        .with_row(row("Receive and assemble"))
        .with_panel(
            rates_by(
                "Spans in",
                "Spans received per second by source (kafka, otlp).",
                "ragpulse_spans_received_total",
                "source",
                INSTANCE,
                stacked=False,
            )
        )
        .with_panel(
            time_series(
                "Traces by state",
                "assembled: complete traces; extracted: a RAG record was found; "
                "no_rag_data: nothing to judge; "
                "evicted: closed at the memory/time cap before the root span ended.",
                [
                    query(
                        f"sum by (state) (rate(ragpulse_traces_total{{{INSTANCE}}}[$__rate_interval]))",
                        "{{state}}",
                    )
                ],
                unit="reqps",
            )
        )
        .with_row(row("Sample and evaluate"))
        .with_panel(
            rates_by(
                "Sampling decisions",
                "Why traces were or were not evaluated: sampled, not_sampled (rate), "
                "throttled (per-minute cap), "
                "over_budget (judge budget spent), no_rag_data.",
                "ragpulse_sampling_decisions_total",
                "decision",
                INSTANCE,
            )
        )
        .with_panel(
            time_series(
                "Queue depth",
                "Sampled traces waiting for the evaluator, per instance. Pinned at its maximum "
                "means the judge is the bottleneck and records start being dropped (overload).",
                [query(f"sum by (instance) (ragpulse_queue_depth{{{INSTANCE}}})", "{{instance}}")],
            )
        )
        .with_panel(
            time_series(
                "Dropped records",
                "Records given up on purpose, by reason (overload, duplicate, "
                "shutdown, ...). Every one is counted; none is lost silently.",
                [
                    query(
                        f"sum by (reason) (rate(ragpulse_dropped_total{{{INSTANCE}}}[$__rate_interval]))",
                        "{{reason}}",
                    )
                ],
                unit="reqps",
                stacked=True,
            )
        )
        .with_panel(
            rates_by(
                "Dead letters",
                "Records sent to the dead-letter topic, by reason (poison messages).",
                "ragpulse_dead_letters_total",
                "reason",
                INSTANCE,
                function="increase",
                unit="short",
            )
        )
        .with_row(row("Kafka and latency"))
        .with_panel(
            time_series(
                "Consumer lag per partition",
                "Unread records per topic and partition. Growing on every partition: "
                "add replicas (up to the partition count). Growing on one: a hot partition.",
                [query("max by (topic, partition) (ragpulse_kafka_consumer_lag)", "{{topic}}/{{partition}}")],
            )
        )
        .with_panel(
            time_series(
                "End-to-end latency",
                "From the end of the evaluated span to its score being exported (includes "
                "the quiet period and the judge).",
                latency_quantiles("ragpulse_end_to_end_seconds", INSTANCE),
                unit="s",
            )
        )
        .with_panel(
            time_series(
                "Versions running",
                "Instances per ragpulse version (ragpulse_build_info).",
                [query("count by (version) (ragpulse_build_info)", "{{version}}")],
                width=24,
            )
        )
        .build()
    )
