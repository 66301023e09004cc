"""The page over HTTP, on the real status server: views, JSON, the token, escaping, trace links."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx
import pytest
from pydantic import SecretStr

from collector.page.app import Page
from collector.page.config import PageConfig
from collector.status_server import StatusServer
from tests.page.factories import faithfulness, make_record, relevancy

TOKEN = "s3cret-page-token"


@contextlib.contextmanager
def serve(config: PageConfig, hide_texts: bool = False) -> Iterator[tuple[str, Page]]:
    page = Page(config, hide_texts=hide_texts)
    server = StatusServer("127.0.0.1", 0, ready=lambda: True, page=page)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", page
    finally:
        server.shutdown()


@pytest.fixture
def open_page() -> Iterator[tuple[str, Page]]:
    with serve(PageConfig(trace_url="http://jaeger:16686/trace/{trace_id}?uiFind={span_id}")) as served:
        yield served


@pytest.fixture
def guarded_page() -> Iterator[tuple[str, Page]]:
    with serve(PageConfig(token=SecretStr(TOKEN))) as served:
        yield served


def test_views_and_api_show_what_was_exported(open_page: tuple[str, Page]) -> None:
    base, page = open_page
    record = make_record(answer="It is 512 metres tall. <script>alert('pwned')</script>")
    page.exporter.export(record, [faithfulness(), relevancy()])
    page.exporter.export(make_record(service="wiki"), [relevancy()])
    assert page.exporter.force_flush(5.0)

    overview = httpx.get(f"{base}/api/overview").json()
    rows = {(r["metric"], r["service"]): r for r in overview["scores"]}
    assert rows["faithfulness", "shop"]["failed"] == 1 and rows["faithfulness", "shop"]["failure_rate"] == 1.0
    assert rows["answer_relevancy", "wiki"]["mean_score"] == 1.0
    assert (
        rows["faithfulness", "shop"]["trend"][-1] == 0.5 and len(rows["faithfulness", "shop"]["trend"]) == 12
    )
    assert overview["causes"] == [
        {"cause": "contradicted_claim", "stage": "generation", "count": 1, "metrics": {"faithfulness": 1}}
    ]
    assert overview["hotspots"]["contradicting"][0]["document"] == "eiffel-1"
    assert overview["store"]["evaluations"] == 3
    assert set(overview["pipeline"]) >= {"queue_depth", "consumer_lag", "dropped", "judge_errors"}

    html = httpx.get(f"{base}/").text
    assert "<svg" in html and "faithfulness" in html and "contradicted claim" in html

    failed = httpx.get(f"{base}/api/evaluations", params={"failed": "1"}).json()["evaluations"]
    assert [(r["trace_id"], r["metric"]) for r in failed] == [(record.trace_id, "faithfulness")]
    listing = httpx.get(f"{base}/evaluations", params={"failed": "1", "metric": "faithfulness"}).text
    assert f"/evaluations/{record.trace_id}/{record.anchor_span_id}" in listing

    detail = httpx.get(f"{base}/evaluations/{record.trace_id}/{record.anchor_span_id}")
    assert detail.status_code == 200
    # The answer is untrusted input: escaped, never markup.
    assert (
        "<script>alert" not in detail.text
        and "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in detail.text
    )
    assert 'id="answer-claim-2"' in detail.text  # the contradicted claim is marked inside the answer
    assert "✗ contradicted" in detail.text and 'href="#passage-1"' in detail.text
    assert f'href="http://jaeger:16686/trace/{record.trace_id}?uiFind={record.anchor_span_id}"' in detail.text
    api = httpx.get(f"{base}/api/evaluations/{record.trace_id}/{record.anchor_span_id}").json()
    assert api["answer"] == record.response and api["passages"][1]["contradicts"] is True

    assert httpx.get(f"{base}/evaluations/{'0' * 32}/{'0' * 16}").status_code == 404
    assert httpx.get(f"{base}/api/evaluations/{'0' * 32}/{'0' * 16}").status_code == 404
    assert httpx.get(f"{base}/static/page.css").headers["content-type"].startswith("text/css")


def test_no_trace_link_without_a_template() -> None:
    with serve(PageConfig()) as (base, page):
        record = make_record()
        page.exporter.export(record, [faithfulness()])
        assert page.exporter.force_flush(5.0)
        detail = httpx.get(f"{base}/evaluations/{record.trace_id}/{record.anchor_span_id}").text
        assert 'id="trace-link"' not in detail


def test_token_guards_the_page_and_api_but_not_metrics_or_probes(guarded_page: tuple[str, Page]) -> None:
    base, _ = guarded_page
    for path in ("/", "/evaluations", "/api/overview", "/api/evaluations", "/api/hotspots"):
        response = httpx.get(base + path)
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert TOKEN not in response.text
    for path in ("/metrics", "/healthz", "/readyz", "/static/page.css"):
        assert httpx.get(base + path).status_code == 200, path
    assert httpx.get(f"{base}/api/overview", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert httpx.get(f"{base}/api/overview", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(f"{base}/?token=wrong").status_code == 401

    with httpx.Client(base_url=base) as client:
        visit = client.get("/evaluations", params={"token": TOKEN, "failed": "1"})
        assert visit.status_code == 303 and visit.headers["location"] == "/evaluations?failed=1"
        cookie = visit.headers["set-cookie"]
        assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
        assert TOKEN not in cookie  # the cookie proves the token without being it
        assert client.get("/").status_code == 200
        assert client.get("/api/overview").status_code == 200
