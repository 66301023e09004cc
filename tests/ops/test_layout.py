"""The package boundaries the layout promises, checked on the import graph."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _modules_after_import(module: str) -> set[str]:
    code = f"import sys, {module}; print(' '.join(sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return set(result.stdout.split())


def test_the_app_side_sdk_loads_nothing_of_the_sidecar() -> None:
    loaded = _modules_after_import("ragpulse_sdk")
    assert not {m for m in loaded if m.split(".")[0] in ("collector", "evaluators")}


def test_evaluators_import_nothing_from_the_collector() -> None:
    for path in (ROOT / "evaluators").rglob("*.py"):
        assert not {m for m in _imports(path) if m.split(".")[0] == "collector"}, path


def test_records_and_sampling_use_only_the_evaluators_facade() -> None:
    for name in ("records.py", "sampling/sampler.py"):
        internals = {m for m in _imports(ROOT / "collector" / name) if m.startswith("evaluators.")}
        assert not internals, (name, internals)


def test_only_the_offline_judge_workers_load_the_model() -> None:
    """Building the sidecar's modules must not load the offline judge: that happens in its processes."""
    loaded = _modules_after_import("collector.pipeline.service")
    assert "collector.judging.offline_worker" not in loaded
    assert "evaluators.offline" not in loaded


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The project modules `path` imports anywhere (a lazy import inside a function counts too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
    return found & modules


def test_no_two_modules_import_each_other() -> None:
    """A pair that imports each other is one idea split in two, or a dependency pointing the wrong way."""
    paths = {
        _module_name(path): path
        for package in ("collector", "evaluators", "ragpulse_sdk", "testkit")
        for path in (ROOT / package).rglob("*.py")
    }
    imports = {name: _imported_modules(path, set(paths)) - {name} for name, path in paths.items()}
    pairs = sorted({tuple(sorted((a, b))) for a, found in imports.items() for b in found if a in imports[b]})
    assert not pairs


def test_the_collector_root_holds_only_what_every_stage_shares() -> None:
    """Each stage has its folder (docs/architecture.md); the root keeps settings, metrics, errors, logs and
    the values the stages pass."""
    shared = {"__init__", "config", "errors", "labels", "logs", "metrics", "records", "spans", "stages"}
    assert {path.stem for path in (ROOT / "collector").glob("*.py")} == shared
