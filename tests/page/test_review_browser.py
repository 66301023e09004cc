"""Issue 50 in a real browser on the real demo: a reviewer corrects five verdicts from the review
queue with the keyboard, the thresholds refit, agreement on held-out corrections is reported before and
after (on the page and in /metrics), and an export of the corrected cases evaluates.
Screenshots go to test-artifacts/page/."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.page.demo import REPO, Demo, screenshot

pytestmark = pytest.mark.browser

CORRECTIONS = 5


def test_a_reviewer_corrects_five_verdicts_from_the_queue_and_the_thresholds_refit(
    tab: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    store = tmp_path / "page.db"
    env = {"RAGPULSE_PAGE__STORE_PATH": str(store), "RAGPULSE_REVIEW__MIN_CORRECTIONS": str(CORRECTIONS)}
    with Demo(env=env) as demo:
        tab.goto(f"{demo.url}/")
        tab.locator("#nav-review").click()
        expect(tab.locator("h1")).to_have_text("Review queue")
        for _ in range(60):  # the demo scores a few records a second: wait for a full queue
            if tab.locator("#review-queue tbody tr").count() >= CORRECTIONS:
                break
            tab.wait_for_timeout(1000)
            tab.reload()
        assert tab.locator("#review-queue tbody tr").count() >= CORRECTIONS
        screenshot(tab, "review-queue")

        reviewed: list[tuple[str, str]] = []
        for n in range(CORRECTIONS):
            # From the queue with the keyboard: j selects the first row, Enter opens it.
            tab.keyboard.press("j")
            tab.keyboard.press("Enter")
            expect(tab.locator("#review-form")).to_be_visible()
            metric = tab.locator("#review-form").get_attribute("data-metric")
            opened = re.search(r"/evaluations/([^/]+)/", tab.url)
            assert opened is not None, tab.url
            reviewed.append((opened.group(1), metric or ""))
            if n == 0:
                tab.locator("#reviewer").fill("Ana Reviewer")  # remembered by the browser afterwards
                tab.keyboard.press("Escape")
            else:
                expect(tab.locator("#reviewer")).to_have_value("Ana Reviewer")
            # The first two verdicts are wrong, the rest right (keys w / r); a claim is re-marked.
            tab.keyboard.press("w" if n < 2 else "r")
            claims = tab.locator("#review-claims li")
            if claims.count():
                claims.first.locator("input[value=not_found]").check()
            tab.locator("#review-note").fill(f"checked against the passages ({n + 1})")
            tab.keyboard.press("Escape")  # out of the note: s saves
            tab.keyboard.press("s")
            status = tab.locator("#review-status")
            expect(status).to_contain_text("Saved.")
            # Fitted per metric: this metric's corrections so far.
            done = sum(m == metric for _, m in reviewed)
            expect(status).to_contain_text(f"{metric} (demo-rag-app, offline)")
            expect(status).to_contain_text(f"refitted on {done} corrections (held out)")
            if n == CORRECTIONS - 1:
                screenshot(tab, "review-saved")
            tab.keyboard.press("q")
            expect(tab.locator("h1")).to_have_text("Review queue")

        # Corrected evaluations leave the queue; the fits table reports agreement before and after.
        expect(tab.locator("#corrected-today")).to_have_text(str(CORRECTIONS))
        fits = tab.locator("#fits-table tbody tr")
        expect(fits.first).to_be_visible()
        counted = sum(int(row.locator("td.num").first.inner_text()) for row in fits.all())
        assert counted == CORRECTIONS
        for row in fits.all():
            assert re.fullmatch(r"\d+%", row.locator(".agreement-shipped").inner_text())
            assert re.fullmatch(r"\d+%", row.locator(".agreement-fitted").inner_text())
            assert row.locator(".in-use").inner_text() in ("fitted", "shipped")
        screenshot(tab, "review-fits")
        metrics = httpx.get(f"{demo.url}/metrics").text
        assert 'ragpulse_judge_human_agreement_ratio{judge="offline"' in metrics
        assert 'thresholds="shipped"' in metrics and 'thresholds="fitted"' in metrics
        wrong = re.findall(r'ragpulse_corrections_total\{metric="\w+",outcome="wrong"\} ([\d.]+)', metrics)
        assert sum(map(float, wrong)) == 2  # per metric: the two may be of different metrics

        # The corrected cases, exported while the demo runs, evaluate with `ragpulse eval`.
        cases, report = tmp_path / "corrected.jsonl", tmp_path / "report.json"
        cli = [sys.executable, "-m", "collector.commands.cli"]
        argv = ["export-cases", "--store", str(store), "--corrected", "--since", "1h", "--out", str(cases)]
        export = subprocess.run([*cli, *argv], capture_output=True, text=True, cwd=REPO, timeout=120)
        assert export.returncode == 0, export.stderr
        lines = [json.loads(line) for line in cases.read_text().splitlines()]
        labelled = {
            (case["metadata"]["trace_id"], name)
            for case in lines
            for name, entry in case["metadata"]["metrics"].items()
            if "human" in entry
        }
        assert labelled == set(reviewed)
    evaluated = subprocess.run(
        [*cli, "eval", str(cases), "--judge", "offline", "--json", str(report)],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert evaluated.returncode in (0, 1), evaluated.stderr  # 1: a case failed its threshold
    assert "against reviewers" in evaluated.stdout
    reviewers = json.loads(report.read_text())["reviewers"]
    assert sum(entry["reviewed"] for entry in reviewers.values()) == CORRECTIONS
