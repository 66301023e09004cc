"""The quality dashboard's panels for metrics only some traffic has: ranking against reference ids,
citations, refusals and conversations.

Each reads the recorded 5-minute mean score (`service_route_metric:ragpulse_evaluation_score:mean5m`),
so a panel stays empty, rather than wrong, for services whose traces do not carry what the metric
needs (reference ids, citing answers, a conversation id); the descriptions say so. The refusal score is
1 for a refusal, so its mean is the refusal rate.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import timeseries

from grafana.generator.common import SERVICE_ROUTE, query, time_series

# (title, metrics, description)
TASK_PANELS = (
    (
        "Retrieval hit rate and MRR (traces with reference ids)",
        ("retrieval_hit_rate", "retrieval_mrr"),
        "Hit rate: share of answers whose retrieval found at least one reference document; MRR: mean of "
        "1 / rank of the first one found. Arithmetic over ids, no judge call. Only traces that name the "
        "documents retrieval should find (rag.reference_context_ids) are scored: empty without them.",
    ),
    (
        "Citation coverage and precision (answers that cite)",
        ("citation_coverage", "citation_precision"),
        "Coverage: share of the answer's factual sentences supported by a passage they cite; precision: "
        "share of citations whose passage supports the sentence (Bedrock). Answers without citations "
        "have no precision.",
    ),
    (
        "Refusal rate",
        ("refusal",),
        "Share of answers that decline to answer. A refusal when the retrieved context held the answer "
        "is a generation failure (see Failure causes); when it did not, retrieval missed.",
    ),
    (
        "Conversations (judged once quiet)",
        ("knowledge_retention", "conversation_relevancy", "conversation_completeness"),
        "Per conversation (session.id / gen_ai.conversation.id), once no new turn came for "
        "sampling.conversations.idle_s: replies that keep what the user said, replies relevant to the "
        "conversation, user intentions satisfied. Reported on the conversation's last trace.",
    ),
)


def task_panel(title: str, metrics: tuple[str, ...], description: str) -> timeseries.Panel:
    selector = f'metric=~"{"|".join(metrics)}", {SERVICE_ROUTE}'
    return time_series(
        title,
        f"{description} Mean over 5 minutes per metric, service and route.",
        [
            query(
                f"service_route_metric:ragpulse_evaluation_score:mean5m{{{selector}}}",
                "{{metric}} {{service}} {{route}}",
            )
        ],
        unit="percentunit",
        max_value=1,
    )


def task_panels() -> list[timeseries.Panel]:
    return [task_panel(*spec) for spec in TASK_PANELS]
