"""The HTML eval report (`ragpulse eval --html`) as a person opens it: in Debian's chromium, from a file,
offline. It is scored by the real offline judge; hostile text in a case must stay text."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from evaluators import Faithfulness, Hallucination, TestCase, evaluate
from evaluators.offline import OfflineJudge
from evaluators.report_html import judge_label, render
from tests.page.conftest import browser, tab  # noqa: F401 - the page suite's chromium fixtures

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "report"
HOSTILE_QUESTION = "When was it built?<script>window.pwned = 1</script>"
HOSTILE_ANSWER = (
    'It was built in 1889.<img src=x onerror="window.pwned = 2"><link rel=stylesheet href=http://x/y.css>'
)

PASSAGES = [
    "The Eiffel Tower was completed in March 1889 as the entrance arch to the 1889 World's Fair in Paris.",
    "The tower is 330 metres tall and was the tallest man-made structure in the world until 1930.",
]
CASES = [
    TestCase(
        id="grounded",
        question="When was the Eiffel Tower completed and how tall is it?",
        answer="The Eiffel Tower was completed in March 1889. It is 330 metres tall.",
        contexts=PASSAGES,
    ),
    TestCase(
        id="contradicted",
        question="When was the Eiffel Tower completed and how tall is it?",
        answer="The Eiffel Tower was completed in March 1889. It is 300 metres tall.",
        contexts=PASSAGES,
    ),
    TestCase(id="hostile", question=HOSTILE_QUESTION, answer=HOSTILE_ANSWER, contexts=PASSAGES),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    result = evaluate(CASES, [Faithfulness(), Hallucination()], OfflineJudge())
    html = render(result, title="nightly <eval>", cases=CASES)
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(html, encoding="utf-8")
    yield path, html


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_the_report_is_self_contained_and_escapes_every_text(report: tuple[Path, str]) -> None:
    _, html = report
    parser = _Tags()
    parser.feed(html)
    names = [tag for tag, _ in parser.tags]
    assert "script" not in names and "img" not in names and "link" not in names
    assert names.count("style") == 1  # inline CSS, nothing fetched
    assert not [attrs for _, attrs in parser.tags if attrs.get("src")]
    assert all(not (attrs.get("href") or "#").startswith(("http", "//")) for _, attrs in parser.tags)
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert "<title>nightly &lt;eval&gt;</title>" in html


def test_the_judge_is_named_once() -> None:
    assert judge_label({"judge": "offline", "model": "lexical+wordllama"}) == (
        "judge: offline (model lexical+wordllama)"
    )
    assert judge_label({"judge": "openai", "model": "gpt-4o-mini"}) == "judge: openai (model gpt-4o-mini)"
    assert judge_label({}) == "judge: unknown"


@pytest.mark.browser
def test_the_report_in_chromium(report: tuple[Path, str], tab: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    path, _ = report
    fetched: list[str] = []
    tab.on("request", lambda request: fetched.append(request.url))
    tab.goto(path.as_uri())
    assert fetched == [path.as_uri()]  # no stylesheet, font, image or script from anywhere
    assert tab.evaluate("window.pwned") is None and tab.evaluate("document.scripts.length") == 0

    expect(tab.locator("h1")).to_have_text("nightly <eval>")
    meta = tab.locator("#meta").inner_text()
    assert "3 cases" in meta and "judge: offline (model " in meta and "judge judge" not in meta

    # The per-metric summary: direction, mean, pass rate and a count per outcome.
    rows = tab.locator("#metric-summary tbody tr")
    expect(rows).to_have_count(2)
    faithfulness = tab.locator("#metric-summary tr[data-metric='faithfulness']")
    hallucination = tab.locator("#metric-summary tr[data-metric='hallucination']")
    expect(faithfulness).to_contain_text("higher is better")
    expect(hallucination).to_contain_text("lower is better")
    assert int(faithfulness.locator("td.failed").inner_text()) >= 1  # the contradicted answer

    # Outcomes are words and colours: failed reads red, passed green, on a tinted chip.
    table = tab.locator("#case-table")
    failed = table.locator("tr", has_text="contradicted").locator(".outcome.failed").first
    passed = table.locator("tr", has_text="grounded").locator(".outcome.passed").first
    expect(failed).to_contain_text("failed")
    expect(passed).to_contain_text("passed")
    colour = "el => getComputedStyle(el).color"
    assert failed.evaluate(colour) == "rgb(207, 34, 46)"
    assert passed.evaluate(colour) == "rgb(26, 127, 55)"
    assert failed.evaluate("el => getComputedStyle(el).backgroundColor") != "rgba(0, 0, 0, 0)"

    # A case opens to its question, answer and verdicts; the hostile text is shown as text.
    tab.locator("#case-table a[href='#case-hostile']").click()
    details = tab.locator("#case-hostile")
    details.locator("summary").click()
    expect(details.locator(".qa").first).to_contain_text(HOSTILE_QUESTION)
    expect(details).to_contain_text('onerror="window.pwned = 2"')
    assert tab.locator("#case-hostile img").count() == 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
