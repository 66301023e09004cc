"""A real browser for the page's tests: Debian's chromium driven by Playwright.

Playwright is pointed at the installed browser (`playwright install` downloads a build of its own,
which a closed network refuses); `launch` gives every run a fresh temporary profile. The flags keep
chromium from calling home. Without chromium the tests skip locally and fail in CI (setup.sh
installs it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        _missing("chromium not found: apt-get install chromium (scripts/setup.sh does)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright not installed: pip install -e '.[dev]'")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    """A page in a context of its own (no cookies from other tests), 1280 px wide."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(30_000)
    try:
        yield context.new_page()
    finally:
        context.close()
