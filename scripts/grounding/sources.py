"""The labelled public sets the grounding model is trained and validated on: where each comes from.

Every set is files of a public repository at a pinned commit (or of a PyPI wheel), recorded with their
SHA-256 in `sources.toml` (a table of data, which this module reads), so a retrain reads exactly the
bytes the shipped model was trained on. None is shipped: `--data DIR` points at a folder laid out as the
paths there say (docs/grounding-model.md, "Training data"). Each set belongs to a *group*; model
selection leaves one group out at a time.

The sets the project reserves for held-out measurement are not read, and not listed.

    python -m scripts.grounding.sources --data DIR   # check DIR against the manifest, print the table
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scripts.grounding import grounded_sets as g
from scripts.grounding import nli_sets as n
from scripts.grounding.examples import Example


@dataclass(frozen=True, slots=True)
class Source:
    name: str
    group: str
    files: tuple[tuple[str, str], ...]  # (path under the data folder, sha256 prefix)
    origin: str  # where the files come from (repository @ commit, or a wheel)
    licence: str
    read: Callable[[Path], Iterator[Example]]


_MANIFEST_FILE = Path(__file__).with_name("sources.toml")
_READERS = {"nli_sets": n, "grounded_sets": g}


def _manifest(path: Path = _MANIFEST_FILE) -> list[Source]:
    """The sets as `sources.toml` records them, in its order (the order training samples them in)."""
    with path.open("rb") as file:
        entries = tomllib.load(file)["source"]
    return [
        Source(
            name=entry["name"],
            group=entry["group"],
            files=tuple(entry["files"].items()),
            origin="; ".join(entry["origin"]),
            licence=entry["licence"],
            read=_reader(entry["read"]),
        )
        for entry in entries
    ]


def _reader(name: str) -> Callable[[Path], Iterator[Example]]:
    """'nli_sets.anli' -> `scripts.grounding.nli_sets.anli`."""
    module, function = name.split(".")
    reader: Callable[[Path], Iterator[Example]] = getattr(_READERS[module], function)
    return reader


MANIFEST: list[Source] = _manifest()


def verify(data: Path, sources: list[Source] = MANIFEST) -> list[str]:
    """Problems with the data folder: missing files, or files whose bytes differ from the manifest."""
    problems = []
    for source in sources:
        for rel, prefix in source.files:
            path = data / rel
            if not path.is_file():
                problems.append(f"{source.name}: {rel} is missing")
            elif not hashlib.sha256(path.read_bytes()).hexdigest().startswith(prefix):
                problems.append(f"{source.name}: {rel} differs from the recorded sha256 {prefix}")
    return problems


def load(data: Path, names: set[str] | None = None) -> list[Example]:
    """Every example of the sets (or of the sets and groups named)."""
    return [
        example
        for source in MANIFEST
        if names is None or source.name in names or source.group in names
        for example in source.read(data)
    ]


def table(data: Path) -> str:
    """The sets as docs/grounding-model.md lists them: group, examples by label, licence, origin."""
    lines = ["| set | group | supported / not | licence | from |", "|---|---|---|---|---|"]
    for source in MANIFEST:
        labels = [e.supported for e in source.read(data)]
        yes = sum(labels)
        counts = f"{yes:,} / {len(labels) - yes:,}"
        lines.append(f"| {source.name} | {source.group} | {counts} | {source.licence} | {source.origin} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="check a data folder against the manifest; print the table")
    parser.add_argument("--data", type=Path, required=True)
    folder = parser.parse_args().data
    if problems := verify(folder):
        sys.exit("\n".join(problems))
    print(table(folder))
