"""The page in a real browser, as issue 13 asks: from `ragpulse demo`, open the overview, watch the
scores arrive, click through to a failed faithfulness evaluation and see the contradicted claim and
the passage that contradicts it. Screenshots go to test-artifacts/page/."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import SecretStr

from collector.demo_corpus import TOPICS
from collector.page.app import Page
from collector.page.config import PageConfig
from collector.status_server import StatusServer
from tests.page.demo import Demo, screenshot
from tests.page.factories import faithfulness, make_record

pytestmark = pytest.mark.browser

PASSAGE_TEXTS = {text for topic in TOPICS for text in topic.passages}


def test_from_the_demo_overview_to_the_passage_that_contradicts_a_claim(tab: Any) -> None:
    from playwright.sync_api import expect

    with Demo(env={"RAGPULSE_PAGE__REFRESH_S": "1"}) as demo:
        response = tab.goto(f"{demo.url}/")
        assert response is not None and response.status == 200
        expect(tab.locator("h1")).to_have_text("Scores, last hour")
        # Scores arrive while the page is open: the overview reloads itself (no click, no reload).
        faithfulness_row = tab.locator("#scores tbody tr", has_text="faithfulness")
        expect(faithfulness_row).to_be_visible(timeout=90_000)
        first_count = int(tab.locator("#stored").inner_text())
        expect(tab.locator("#causes + table")).to_contain_text("contradicted claim", timeout=90_000)
        tab.wait_for_function(f"Number(document.querySelector('#stored').textContent) > {first_count}")
        mean = faithfulness_row.locator("td.score").inner_text()
        assert re.fullmatch(r"[01]\.\d\d", mean), mean
        expect(faithfulness_row.locator("svg.spark")).to_be_visible()
        screenshot(tab, "overview")

        # The row's failed count opens the latest failed faithfulness evaluations.
        tab.locator("#pause-refresh").check()
        faithfulness_row.locator("a.bad").click()
        expect(tab.locator("h1")).to_have_text("Failed evaluations")
        assert "failed=1" in tab.url and "metric=faithfulness" in tab.url
        rows = tab.locator("#evaluations tbody tr")
        expect(rows.first).to_contain_text("faithfulness")
        assert all("failed" in text for text in rows.all_inner_texts())
        screenshot(tab, "failed-evaluations", full_page=False)
        tab.locator("#evaluations tbody tr", has_text="contradicted claim").first.locator("a.open").click()

        # The detail: the metric failed, a claim is marked contradicted, and its passage is shown.
        expect(tab.locator("#metric-faithfulness")).to_contain_text("failed")
        expect(tab.locator("#metric-faithfulness")).to_contain_text("contradicted claim")
        claim = tab.locator("#claims li[data-verdict='contradicted']").first
        expect(claim.locator(".badge")).to_have_text("✗ contradicted")  # words, not colour alone
        reference = claim.locator("a.passage-ref").first
        document_id = reference.inner_text()
        assert re.fullmatch(r"kb-\d\.\d", document_id), document_id
        reference.click()
        assert re.search(r"#passage-\d$", tab.url), tab.url
        passage = tab.locator(tab.url[tab.url.index("#") :])
        expect(passage.locator(".doc-id")).to_have_text(document_id)
        expect(passage).to_contain_text("decides claim")
        assert passage.locator(".passage-text").inner_text() in PASSAGE_TEXTS
        expect(tab.locator("#answer mark.claim.bad").first).to_be_visible()  # marked inside the answer too
        screenshot(tab, "detail")


def test_hide_texts_shows_verdicts_and_ids_only(tab: Any) -> None:
    from playwright.sync_api import expect

    texts = {
        text for topic in TOPICS for text in (topic.question, topic.grounded, topic.invented, topic.off_topic)
    }
    texts |= PASSAGE_TEXTS
    with Demo(env={"RAGPULSE_HIDE_TEXTS": "true"}) as demo:
        tab.goto(f"{demo.url}/")
        expect(tab.locator(".banner")).to_contain_text("Texts are hidden")
        expect(tab.locator("#scores tbody tr", has_text="faithfulness")).to_be_visible(timeout=90_000)
        tab.goto(f"{demo.url}/evaluations?failed=1&metric=faithfulness")
        tab.locator("#evaluations a.open").first.click()
        expect(tab.locator("#claims li").first).to_contain_text("claim 1")
        expect(tab.locator("#passages .doc-id").first).to_have_text(re.compile(r"kb-\d\.0"))
        screenshot(tab, "detail-hide-texts")
        detail_html = tab.content()
        trace_id, span_id = tab.url.rsplit("/", 2)[-2:]
        tab.goto(f"{demo.url}/api/evaluations/{trace_id}/{span_id}")
        for html in (detail_html, tab.content()):
            for text in texts:
                for sentence in text.split(". "):
                    assert len(sentence) < 25 or sentence.rstrip(".") not in html, sentence


def test_token_required_then_remembered(tab: Any) -> None:
    from playwright.sync_api import expect

    page = Page(PageConfig(token=SecretStr("open-sesame")))
    server = StatusServer("127.0.0.1", 0, ready=lambda: True, page=page)
    server.start()
    try:
        record = make_record()
        page.exporter.export(record, [faithfulness()])
        assert page.exporter.force_flush(5.0)
        base = f"http://127.0.0.1:{server.port}"
        response = tab.goto(f"{base}/")
        assert response is not None and response.status == 401
        expect(tab.locator("h1")).to_have_text("A token is required")
        screenshot(tab, "token-required", full_page=False)
        response = tab.goto(f"{base}/?token=open-sesame")
        assert (
            response is not None and response.status == 200 and tab.url == f"{base}/"
        )  # token out of the URL
        expect(tab.locator("#scores")).to_contain_text("faithfulness")
        response = tab.goto(f"{base}/evaluations/{record.trace_id}/{record.anchor_span_id}")  # the cookie
        assert response is not None and response.status == 200
        expect(tab.locator("#claims")).to_contain_text("It is 512 metres tall.")
    finally:
        server.shutdown()
