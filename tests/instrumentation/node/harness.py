"""The Node conformance apps from Python: install, run, capture (`-m tests.instrumentation.node.harness`).

The apps (apps.mjs) live beside this file; their packages are installed once into a folder cached by
package-lock.json's hash (scripts/instrumentation-node.sh). An app runs from a fresh copy of the
sources in a subfolder of that folder, where Node's module resolution finds its node_modules, and asks
the questions of a corpus file this module writes from tests/instrumentation/apps/corpus.py, so the
Node and the Python apps share one handbook. Run as a module, it refreshes the committed captures
(`traces.json`, `logs.json`, `expected.json` under tests/data/instrumentation/<app>-<instrumentation>/)
against the scripted LLM server, exporting nowhere.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from testkit import CAPTURES
from tests.instrumentation.apps import corpus
from tests.instrumentation.llm_server import ScriptedLLMServer

ROOT = Path(__file__).resolve().parents[3]
SOURCES = Path(__file__).resolve().parent
# (app, instrumentation), as apps.mjs `APPS` and telemetry.mjs name them: the AI SDK's own `ai.*`
# telemetry (`ai-sdk`) and its GenAI-conventions integration (`ai-sdk-genai`), OpenInference's
# instrumentation of the openai JS SDK.
COMBINATIONS: tuple[tuple[str, str], ...] = (
    ("vercel-ai", "ai-sdk"),
    ("vercel-ai-tool", "ai-sdk"),
    ("openai-js", "openinference"),
    ("vercel-ai", "ai-sdk-genai"),
    ("vercel-ai-tool", "ai-sdk-genai"),
)


def combination_name(app: str, instrumentation: str) -> str:
    return f"{app}-{instrumentation}"


NAMES: dict[str, tuple[str, str]] = {combination_name(*c): c for c in COMBINATIONS}


def node_folder() -> Path:
    """Install (or reuse) the apps' node_modules and return the cached folder holding them."""
    script = ROOT / "scripts" / "instrumentation-node.sh"
    result = subprocess.run(["bash", str(script)], stdout=subprocess.PIPE, text=True, check=True, timeout=900)
    return Path(result.stdout.strip().splitlines()[-1])


def corpus_document(questions: Sequence[corpus.Question] = corpus.QUESTIONS) -> str:
    """The handbook and the questions as the Node apps read them (`Corpus.to_json` plus the model names
    and the route)."""
    document = json.loads(corpus.Corpus(corpus.PASSAGES, tuple(questions)).to_json())
    document |= {"model": corpus.MODEL, "embeddingModel": corpus.EMBEDDING_MODEL, "route": corpus.ROUTE}
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def run(
    folder: Path, combination: tuple[str, str], llm_base_url: str, *extra: str, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """Run one app to completion (it flushes its spans on exit) from a fresh copy of the sources."""
    work = Path(tempfile.mkdtemp(prefix="run-", dir=folder))
    try:
        for source in SOURCES.glob("*.mjs"):
            shutil.copy(source, work / source.name)
        (work / "corpus.json").write_text(corpus_document())
        command = [
            "node",
            str(work / "main.mjs"),
            "--app",
            combination[0],
            "--instrumentation",
            combination[1],
            "--llm-base-url",
            llm_base_url,
            "--corpus",
            str(work / "corpus.json"),
            *extra,
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def capture(folder: Path, combination: tuple[str, str], llm_base_url: str, out: Path) -> None:
    """Run one app exporting nowhere and write its capture into `out`; one clear failure otherwise."""
    result = run(folder, combination, llm_base_url, "--endpoint", "none", "--capture", str(out))
    if result.returncode != 0:
        raise AssertionError(f"{combination_name(*combination)} failed: {result.stderr[-4000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CAPTURES)
    parser.add_argument("combinations", nargs="*", help=f"of {', '.join(NAMES)} (default: all)")
    args = parser.parse_args()
    if unknown := set(args.combinations) - set(NAMES):
        parser.error(f"unknown combinations {sorted(unknown)}")
    folder = node_folder()
    with ScriptedLLMServer() as llm:
        for name in args.combinations or list(NAMES):
            out = args.out / name
            capture(folder, NAMES[name], llm.base_url, out)
            print(f"captured {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
