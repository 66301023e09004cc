"""Every alert's runbook_url opens a runbook that exists: a page in docs/runbooks/ with the alert's section.

An on-call engineer follows the link from the page they were woken by. A link to a renamed file or a
missing anchor lands on the top of a page, or on GitHub's 404, at the worst moment; a runbook naming a
metric that no longer exists sends them looking for nothing. No Prometheus needed: the links and names are
checked against the repository itself.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

import collector.metrics
import collector.page.metrics  # registers the page's metrics in the same registry
from tests.ops.tools import REPO, RULES_FILE

RUNBOOKS = REPO / "docs" / "runbooks"
# Where the repository lives, as the links spell it; pyproject's [project.urls] wins when it declares one.
DEFAULT_REPOSITORY = "https://github.com/ragpulse/ragpulse"
SECTIONS = ("What it means.", "Confirm it.", "Likely causes.", "What to do.", "Silence it.")


def _rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES_FILE.read_text())["groups"] for rule in group["rules"]]


def _alerts() -> list[dict]:
    return [rule for rule in _rules() if "alert" in rule]


def _repository() -> str:
    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"].get("urls", {})
    for key in ("Repository", "Source", "Homepage"):
        if key in urls and "github.com" in urls[key]:
            return str(urls[key]).rstrip("/").removesuffix(".git")
    return DEFAULT_REPOSITORY


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _sections(page: Path) -> dict[str, str]:
    """Anchor -> the text under that `##` heading (up to the next one)."""
    parts = re.split(r"^## (.+)$", page.read_text(), flags=re.MULTILINE)
    return {github_anchor(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


@pytest.mark.parametrize("rule", _alerts(), ids=lambda rule: rule["alert"])
def test_runbook_url_resolves_to_a_page_and_a_section_of_this_alert(rule: dict) -> None:
    url = rule["annotations"]["runbook_url"]
    prefix = f"{_repository()}/blob/main/"
    assert url.startswith(prefix), f"{rule['alert']}: {url} is not under {prefix}"
    parts = urlsplit(url)
    path = REPO / url.removeprefix(prefix).split("#")[0]
    assert path.parent == RUNBOOKS and path.suffix == ".md", url
    assert path.is_file(), f"{rule['alert']}: {path.relative_to(REPO)} does not exist"
    sections = _sections(path)
    assert parts.fragment in sections, f"{rule['alert']}: no heading #{parts.fragment} in {path.name}"
    assert parts.fragment == github_anchor(rule["alert"]), "the section is named after the alert"
    missing = [name for name in SECTIONS if f"**{name}**" not in sections[parts.fragment]]
    assert not missing, f"{rule['alert']}'s runbook lacks {missing}"


def test_every_runbook_section_is_an_alert_and_the_index_lists_them_all() -> None:
    """No orphan runbook for an alert that was renamed or removed; the index links each one."""
    alerts = {github_anchor(rule["alert"]) for rule in _alerts()}
    documented = {
        anchor for page in RUNBOOKS.glob("*.md") if page.name != "README.md" for anchor in _sections(page)
    }
    assert documented == alerts
    index = (RUNBOOKS / "README.md").read_text()
    for rule in _alerts():
        assert re.search(rf"\(\w+\.md#{github_anchor(rule['alert'])}\)", index), rule["alert"]


def test_every_metric_and_recording_rule_a_runbook_names_exists() -> None:
    """A runbook tells the reader what to look for on /metrics and in Prometheus: those names must exist."""
    exported = set(collector.metrics.REGISTRY._names_to_collectors)
    recorded = {rule["record"] for rule in _rules() if "record" in rule}
    text = "\n".join(page.read_text() for page in RUNBOOKS.glob("*.md"))
    metrics = set(re.findall(r"(?<![\w:])ragpulse_[a-z0-9_]+(?![\w:])", text))
    assert metrics and metrics - exported == set()
    recordings = set(re.findall(r"(?<![\w:])[a-z_]+:[a-z_][a-z0-9_]*(?::[a-z0-9_]+)?(?![\w:])", text))
    recordings = {name for name in recordings if "ragpulse" in name}
    # `...:burn_rate<W>` names a family of windows: any recorded window of it counts.
    unknown = {name for name in recordings if not any(r == name or r.startswith(name) for r in recorded)}
    assert recordings and unknown == set()
