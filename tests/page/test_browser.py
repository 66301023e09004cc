"""The page in a real browser, as issue 13 asks: from `ragpulse demo`, open the overview, watch the
scores arrive, click through to a failed faithfulness evaluation and see the contradicted claim and
the passage that contradicts it. Screenshots go to test-artifacts/page/."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import SecretStr

from collector.commands.demo_corpus import TOPICS
from collector.http.status import StatusServer
from collector.page.app import Page
from collector.page.config import PageConfig
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
        # The list stays as it was read; when a contradicted claim is not on it yet, the reader asks
        # for what arrived since ("N new evaluations — show").
        contradicted = tab.locator("#evaluations tbody tr", has_text="contradicted claim")
        for _ in range(20):
            if contradicted.count():
                break
            expect(tab.locator("#new-evaluations")).to_be_visible(timeout=60_000)
            tab.locator("#new-evaluations").click()
            expect(tab.locator("#new-evaluations")).to_be_hidden()
        contradicted.first.locator("a.open").click()

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


def test_the_list_pages_sorts_searches_by_keys_and_never_changes_under_the_reader(tab: Any) -> None:
    from playwright.sync_api import expect

    with Demo(env={"RAGPULSE_PAGE__REFRESH_S": "1"}) as demo:
        tab.goto(f"{demo.url}/")
        # Cards only for what the demo runs: no Kafka consumer, no LLM judge.
        expect(tab.locator("#cards")).to_contain_text("queue")
        expect(tab.locator("#cards")).not_to_contain_text("Kafka lag")
        expect(tab.locator("#cards")).not_to_contain_text("judge spend")
        tab.wait_for_function("Number(document.querySelector('#stored').textContent) > 60", timeout=90_000)

        tab.goto(f"{demo.url}/evaluations?limit=25")
        links = tab.locator("#evaluations a.open")
        read = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert len(read) == 25
        # Evaluations keep arriving: a link says so, and the rows under the reader stay as they were.
        news = tab.locator("#new-evaluations")
        expect(news).to_have_text(re.compile(r"^\d+ new evaluations? — show$"), timeout=30_000)
        assert [links.nth(i).get_attribute("href") for i in range(links.count())] == read
        screenshot(tab, "evaluations-new", full_page=False)

        # Keys: n for the next page (read as of the same moment), back returns to page 1.
        tab.keyboard.press("n")
        expect(tab.locator("#page-number")).to_have_text("2")
        assert "page=2" in tab.url and "until=" in tab.url
        page_two = links.first.get_attribute("href")
        assert page_two not in read
        tab.go_back()
        expect(tab.locator("#page-number")).to_have_text("1")
        tab.go_forward()
        expect(links.first).to_have_attribute("href", page_two)
        tab.keyboard.press("p")
        expect(tab.locator("#page-number")).to_have_text("1")

        # Sort by score from the column header: lowest first, unscored last.
        tab.locator("#sort-score").click()
        expect(tab.locator("#sort-score")).to_have_attribute("aria-sort", "ascending")
        scores = [s for s in tab.locator("#evaluations tbody td.num").all_inner_texts() if s != "–"]
        assert scores == sorted(scores) and "sort=score" in tab.url

        # Search from the keyboard, then narrow by metric, outcome and a score range: all in the URL.
        tab.keyboard.press("/")
        expect(tab.locator("#q")).to_be_focused()
        tab.keyboard.type("eiffel")
        tab.keyboard.press("Enter")
        expect(tab.locator("#q")).to_have_value("eiffel")
        questions = tab.locator("#evaluations td.question").all_inner_texts()
        assert questions and all("eiffel" in q.lower() for q in questions)
        tab.select_option("#metric", "faithfulness")
        tab.select_option("#outcome", "failed")
        tab.fill("#score_max", "0.5")
        tab.locator("#filters button[type=submit]").click()
        expect(tab.locator("#score_max")).to_have_value("0.5")
        for name in ("q=eiffel", "metric=faithfulness", "outcome=failed", "score_max=0.5", "sort=score"):
            assert name in tab.url, (name, tab.url)
        rows = tab.locator("#evaluations tbody tr")
        expect(rows.first).to_contain_text("faithfulness")
        for text in rows.all_inner_texts():
            assert "failed" in text and "faithfulness" in text
        shared = tab.url
        screenshot(tab, "evaluations-filtered", full_page=False)

        # The address is the state: opened afresh, it shows the same list; j and Enter open a row.
        tab.goto(shared)
        expect(tab.locator("#metric")).to_have_value("faithfulness")
        tab.locator("h1").click()
        tab.keyboard.press("j")
        expect(tab.locator("#evaluations a.open").first).to_be_focused()
        tab.keyboard.press("Enter")
        expect(tab.locator("#metric-faithfulness")).to_contain_text("failed")

        # The detail names the judge's spend as the judge's, and links the trace (no trace_url set).
        expect(tab.locator("#judge-spend")).to_have_text(re.compile(r"^judge: \d+ tokens · \$"))
        tab.locator("#trace-link").click()
        expect(tab.locator("h1")).to_contain_text("Trace")
        record = tab.locator(".trace-record").first
        expect(record.locator(".convention")).not_to_have_text("–")
        expect(record.locator("[data-metric=faithfulness]")).to_contain_text("failed")
        screenshot(tab, "trace")


def test_a_conversation_shows_its_turns_in_order_with_their_scores(tab: Any) -> None:
    from playwright.sync_api import expect

    from collector.stages import Evaluation, Outcome

    page = Page(PageConfig())
    server = StatusServer("127.0.0.1", 0, ready=lambda: True, page=page)
    server.start()
    try:
        turns = [
            make_record(conversation_id="chat-42", end_time_unix_nano=(1_800_000_000 + i) * 10**9, query=q)
            for i, q in enumerate(
                ("My name is Ada.", "When was the tower completed?", "And what is my name?")
            )
        ]
        for turn, score in zip(turns, (1.0, 0.5, 1.0), strict=True):
            page.exporter.export(turn, [faithfulness(score)])
        retention = Evaluation(
            "knowledge_retention",
            Outcome.FAILED,
            0.25,
            "forgot the name",
            0.5,
            False,
            "openai",
            "gpt-4o-mini",
        )
        page.exporter.export(turns[-1], [retention])
        assert page.exporter.force_flush(5.0)
        base = f"http://127.0.0.1:{server.port}"
        tab.goto(f"{base}/evaluations/{turns[1].trace_id}/{turns[1].anchor_span_id}")
        tab.locator("#conversation-link").click()
        expect(tab.locator("h1")).to_contain_text("chat-42")
        rows = tab.locator("#turns tbody tr")
        expect(rows).to_have_count(3)
        assert [q.split("?")[0] for q in tab.locator("#turns td.question").all_inner_texts()] == [
            "My name is Ada.",
            "When was the tower completed",
            "And what is my name",
        ]
        expect(rows.nth(1).locator("[data-metric=faithfulness]")).to_have_text("0.50")
        metric = tab.locator("#conversation-metrics tr[data-metric=knowledge_retention]")
        expect(metric).to_contain_text("0.25")
        expect(metric).to_contain_text("failed")
        expect(metric).to_contain_text("turn 3")
        screenshot(tab, "conversation")
        rows.nth(2).locator("a.open").click()
        expect(tab.locator("#question")).to_have_text("And what is my name?")
    finally:
        server.shutdown()
