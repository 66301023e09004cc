"""How stored data reads on the page: claims found in the answer, links, the page switched off."""

from __future__ import annotations

from collector.config import Settings
from collector.page.charts import sparkline
from collector.page.views import mark_claims, trace_link
from collector.pipeline.service import build_exporters, build_page


def test_claims_are_marked_where_they_stand_in_the_answer() -> None:
    answer = "The tower opened in 1889. It is 512 metres tall! Visit soon."
    claims = [
        {"kind": "claim", "item": "It is 512 metres tall.", "verdict": "contradicted", "passages": [1]},
        {"kind": "claim", "item": "The tower opened in 1889.", "verdict": "supported", "passages": [0]},
        {
            "kind": "claim",
            "item": "Tickets cost 20 euros.",
            "verdict": "not_found",
            "passages": [],
        },  # rephrased
    ]
    segments = mark_claims(answer, claims)
    assert "".join(s["text"] for s in segments) == answer  # nothing lost, nothing added
    assert [(s["text"], s["claim"]) for s in segments if s["claim"]] == [
        ("The tower opened in 1889", 2),
        ("It is 512 metres tall", 1),
    ]
    assert mark_claims("", claims) == [] and mark_claims(answer, []) == [{"text": answer, "claim": None}]


def test_trace_link_and_sparkline() -> None:
    assert trace_link(None, "a" * 32, "b" * 16) is None
    assert trace_link("http://jaeger:16686/trace/{trace_id}#{span_id}", "ab", "cd") == (
        "http://jaeger:16686/trace/ab#cd"
    )
    svg = str(sparkline([None, 0.5, 0.75, None, 1.0], threshold=0.5))
    assert svg.startswith("<svg") and "<polyline" in svg and "0.50 → 0.75 → 1.00" in svg
    assert "no scores yet" in str(sparkline([None] * 12))


def test_page_can_be_switched_off() -> None:
    settings = Settings().with_values(**{"page.enabled": False})
    assert build_page(settings) is None
    assert not [e for e in build_exporters(settings) if type(e).__name__ == "StoreExporter"]
    page = build_page(Settings())
    assert page is not None and page.exporter in build_exporters(Settings(), page)
    page.close()
