"""No reference in README.md or docs/ to a file that is not in the repository.

Checked in every markdown file a reader starts from (README.md, docs/**/*.md):
- markdown links and images to a relative path: the file or folder exists, and a `#fragment` names a
  heading of that page (GitHub's anchors) or an explicit `id`;
- repository paths in inline code (`docs/x.md`, `collector/commands/demo.py`,
  `grafana/dashboards/*.json`): they exist (a glob matches something);
- file names written bare or in code (`PEERS.md`): a markdown file of that name exists beside the page,
  at the root or in docs/.
Fenced code blocks are skipped: they show commands and configs, not references.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
TOP = ("collector", "evaluators", "ragpulse_sdk", "testkit", "tests", "docs", "deploy", "grafana",
       "benchmarks", "scripts")  # fmt: skip

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
CODE = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REPO_PATH = re.compile(rf"^(?:\./)?((?:{'|'.join(TOP)})/[\w.*/-]*)$")
MD_NAME = re.compile(r"(?<![\w/.-])([\w-]+\.md)\b")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
HTML_ID = re.compile(r"""\bid=["']([^"']+)["']""")


def _prose(text: str) -> str:
    """The page without its fenced code blocks (blank lines keep the line numbers)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its rendered text (link text, no backticks or asterisks), lower
    case, punctuation other than `-` and `_` dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[`*]", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    text = _prose(page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set(HTML_ID.findall(text))
    for heading in HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def broken_references(page: Path, root: Path = ROOT) -> list[str]:
    text = _prose(page.read_text(encoding="utf-8"))
    where = page.relative_to(root)
    problems: list[str] = []
    for match in LINK.finditer(CODE.sub(lambda m: " " * len(m.group(0)), text)):
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path_part, _, fragment = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        line = _line(text, match.start())
        if not resolved.exists() or root not in (resolved, *resolved.parents):
            problems.append(f"{where}:{line}: link to {target}: no such file in the repository")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            problems.append(f"{where}:{line}: link to {target}: {resolved.name} has no heading #{fragment}")
    for match in CODE.finditer(text):
        code = match.group(2).strip()
        repo_path = REPO_PATH.match(code)
        if repo_path and not any(ch in code for ch in "<>{}$"):
            path = repo_path.group(1)
            exists = any(root.glob(path.rstrip("/"))) if "*" in path else (root / path).exists()
            if not exists:
                problems.append(
                    f"{where}:{_line(text, match.start())}: `{code}`: no such path in the repository"
                )
    for match in MD_NAME.finditer(re.sub(r"\]\([^)]*\)", "]", text)):  # link targets: checked above
        name = match.group(1)
        if not any((base / name).exists() for base in (page.parent, root, root / "docs")) and not any(
            root.glob(f"docs/**/{name}")
        ):
            problems.append(f"{where}:{_line(text, match.start())}: {name}: no such file in the repository")
    return problems


def test_slugs_follow_github() -> None:
    assert slug("The page") == "the-page"
    assert slug("Custom criteria by name (`custom_metrics:`)") == "custom-criteria-by-name-custom_metrics"
    assert slug("The evaluators library and `ragpulse eval`") == "the-evaluators-library-and-ragpulse-eval"
    assert (
        slug("1. The demo (one command, no Kafka, no API key)")
        == "1-the-demo-one-command-no-kafka-no-api-key"
    )


def test_the_checker_finds_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "grafana" / "dashboards").mkdir(parents=True)
    (tmp_path / "grafana" / "dashboards" / "quality.json").write_text("{}")
    (tmp_path / "docs" / "quickstart.md").write_text("# Quick start\n\n## 1. The demo\n")
    page = tmp_path / "docs" / "probe.md"
    page.write_text(
        "# Probe\n\nSee [gone](gone.md), [here](#probe), [there](quickstart.md#no-such-part), METRICS.md, "
        "[step](quickstart.md#1-the-demo), `docs/nope.md`, `docs/quickstart.md` and "
        "`grafana/dashboards/*.json`.\n\n```\n[not a link](missing.md)\n```\n",
        encoding="utf-8",
    )
    problems = broken_references(page, tmp_path)
    assert len(problems) == 4, problems
    assert any("gone.md" in p for p in problems) and any("#no-such-part" in p for p in problems)
    assert any("METRICS.md" in p for p in problems) and any("docs/nope.md" in p for p in problems)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_reference_resolves(page: Path) -> None:
    problems = broken_references(page)
    assert not problems, "\n".join(problems)
