"""The page over HTTP, on the real status server: views, JSON, the token, escaping, trace links."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import httpx
import pytest
from pydantic import SecretStr

from collector.http.status import StatusServer
from collector.metrics import CONSUMER_LAG, JUDGE_REQUESTS
from collector.page.app import Page
from collector.page.config import PageConfig
from collector.page.pipeline_state import has_series
from collector.review.config import ReviewConfig
from collector.stages import Evaluation, Outcome
from tests.page.factories import faithfulness, make_record, relevancy

TOKEN = "s3cret-page-token"


@contextlib.contextmanager
def serve(
    config: PageConfig, hide_texts: bool = False, review: ReviewConfig | None = None
) -> Iterator[tuple[str, Page]]:
    page = Page(config, hide_texts=hide_texts, review=review)
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


def test_without_a_trace_url_the_trace_link_opens_the_pages_own_trace_view() -> None:
    with serve(PageConfig()) as (base, page):
        record = make_record(conversation_id="chat-1", convention="openinference")
        page.exporter.export(record, [faithfulness()])
        assert page.exporter.force_flush(5.0)
        detail = httpx.get(f"{base}/evaluations/{record.trace_id}/{record.anchor_span_id}").text
        assert f'id="trace-link" href="/traces/{record.trace_id}"' in detail
        assert 'id="conversation-link" href="/conversations/chat-1"' in detail
        assert "judge: 812 tokens · $0.0003" in detail  # the judge's spend, not the app's usage
        view = httpx.get(f"{base}/traces/{record.trace_id}")
        assert view.status_code == 200 and record.anchor_span_id in view.text and "openinference" in view.text
        api = httpx.get(f"{base}/api/traces/{record.trace_id}").json()
        assert api["records"][0]["evaluations"][0]["metric"] == "faithfulness" and api["external_url"] is None
        assert httpx.get(f"{base}/traces/{'0' * 32}").status_code == 404
        conversation = httpx.get(f"{base}/api/conversations/chat-1").json()
        assert [t["span_id"] for t in conversation["turns"]] == [record.anchor_span_id]
        assert httpx.get(f"{base}/conversations/a/b%2Fc").status_code == 404  # ids may hold a slash


def test_the_list_pages_and_counts_what_arrived_since_it_was_read() -> None:
    with serve(PageConfig()) as (base, page):
        for _ in range(7):
            page.exporter.export(make_record(), [faithfulness(0.9)])
        assert page.exporter.force_flush(5.0)
        first = httpx.get(f"{base}/api/evaluations", params={"limit": "5"}).json()
        assert (first["total"], first["page"], first["pages"], len(first["evaluations"])) == (7, 1, 2, 5)
        since = first["until"]
        while time.time() <= since:  # the list was read as of `since` (rounded up to the millisecond)
            time.sleep(0.001)
        page.exporter.export(make_record(), [faithfulness(0.2)])
        assert page.exporter.force_flush(5.0)
        second = httpx.get(f"{base}/api/evaluations", params={"limit": "5", "page": "2", "until": since})
        assert len(second.json()["evaluations"]) == 2  # the page as it was: nothing shifted onto it
        fresh = httpx.get(f"{base}/api/evaluations/new", params={"since": since}).json()
        failed = httpx.get(f"{base}/api/evaluations/new", params={"since": since, "outcome": "failed"}).json()
        assert fresh == {"new": 1} and failed == {"new": 1}
        assert httpx.get(f"{base}/api/evaluations/new").status_code == 400
        html = httpx.get(f"{base}/evaluations", params={"limit": "5", "page": "9"}).text
        assert 'id="page-number">2<' in html and 'id="prev-page"' in html and 'id="next-page"' not in html


def test_cards_only_for_what_this_process_runs() -> None:
    # The registry is the process's: what an earlier test in this process started shows here too.
    kafka_before, judge_before = has_series(CONSUMER_LAG), has_series(JUDGE_REQUESTS)
    with serve(PageConfig()) as (base, _):
        pipeline = httpx.get(f"{base}/api/overview").json()["pipeline"]
        html = httpx.get(f"{base}/").text
        assert (pipeline["consumer_lag"] is None, "Kafka lag" not in html) == (not kafka_before,) * 2
        assert (pipeline["judge_cost_usd"] is None, "judge spend" not in html) == (not judge_before,) * 2
        assert 'id="stored"' in html and "sampled" in html
        CONSUMER_LAG.labels("ragpulse-spans-page-test", "0").set(42)  # a Kafka consumer got a partition
        try:
            html = httpx.get(f"{base}/").text
            assert (
                "Kafka lag" in html
                and httpx.get(f"{base}/api/overview").json()["pipeline"]["consumer_lag"] >= 42
            )
        finally:
            CONSUMER_LAG.remove("ragpulse-spans-page-test", "0")


def test_hide_texts_shows_why_a_metric_is_unmeasured() -> None:
    why = "unmeasured: no reference context ids to compare against"
    unmeasured = Evaluation("contextual_recall", Outcome.UNMEASURED, None, why, 0.5, False, "offline", "")
    with serve(PageConfig(), hide_texts=True) as (base, page):
        record = make_record()
        page.exporter.export(record, [faithfulness(), unmeasured])
        assert page.exporter.force_flush(5.0)
        detail = httpx.get(f"{base}/evaluations/{record.trace_id}/{record.anchor_span_id}").text
    assert why in detail and "hidden (hide_texts)" in detail and "1 of 2 claims supported" not in detail


def test_token_guards_the_page_and_api_but_not_metrics_or_probes(guarded_page: tuple[str, Page]) -> None:
    base, _ = guarded_page
    paths = ("/", "/evaluations", "/traces/ab", "/conversations/c", "/api/overview", "/api/evaluations")
    for path in (*paths, "/api/evaluations/new", "/api/traces/ab", "/api/conversations/c", "/api/hotspots"):
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
