"""Real instrumentation traffic at scale: the conformance apps over HaluEval QA instead of the handbook.

The corpus (`halueval_corpus`): held-out HaluEval QA rows (the one pair in five the offline judge never
saw in training, `scripts.offline_training`), in file order, their texts stripped (some start or end
with spaces, which a prompt-reading convention rightly drops). Each row's knowledge is a passage, its
question is asked, and the scripted LLM answers it with the row's right answer or its hallucinated one,
alternately, so exactly half of either (one more right answer when the count is odd). Every app indexes
all the passages and retrieves its own top 2 for each question, as in production: it may miss the
question's own passage. A row is skipped when its question could make the scripted server answer the
wrong question (a chosen question or passage contains it, or it contains a chosen question).

`cached_capture` runs each combination once over the corpus (`--corpus`), exporting nowhere, into
`${RAGPULSE_CACHE:-~/.cache/ragpulse}/traffic-<hash>/<combo>/` (OTLP JSON as `capture.py` writes it),
keyed by the instrumentation requirements, the corpus and the harness code (apps, LLM server), and
reuses it while they are unchanged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from tests.instrumentation.apps import corpus
from tests.instrumentation.capture import capture, combination_name, instrumentation_python
from tests.instrumentation.llm_server import ScriptedLLMServer

DEFAULT_QUESTIONS = 400
HERE = Path(__file__).resolve().parent
# What a capture depends on besides the corpus: the pinned libraries and the harness that drives them.
_KEYED_FILES = (
    HERE / "requirements.txt",
    HERE / "llm_server.py",
    HERE / "capture.py",
    *sorted((HERE / "apps").glob("*.py")),
)
_COMPLETE = ".complete"


def halueval_corpus(questions: int = DEFAULT_QUESTIONS) -> corpus.Corpus:
    """The first `questions` usable held-out HaluEval QA rows as a corpus (deterministic)."""
    from scripts.offline_training import load_halueval

    pairs: dict[int, dict[int, str]] = {}
    rows: dict[int, tuple[str, str]] = {}
    for item in load_halueval("qa"):
        if item.split == "test":
            pairs.setdefault(item.pair, {})[item.label] = item.answer.strip()
            rows[item.pair] = (item.context.strip(), item.question.strip())
    passages: dict[str, corpus.Passage] = {}  # by text: rows sharing their knowledge share the passage
    chosen: list[corpus.Question] = []
    for pair in sorted(rows):
        if len(chosen) == questions:
            break
        knowledge, question = rows[pair]
        if not _unambiguous(question, knowledge, [q.text for q in chosen], passages.keys()):
            continue
        passage = passages.setdefault(knowledge, corpus.Passage(f"halueval-qa-{pair}", knowledge))
        grounded = len(chosen) % 2 == 0
        answer = pairs[pair][1 if grounded else 0]
        chosen.append(corpus.Question(question, answer, grounded, passage_id=passage.id))
    return corpus.Corpus(tuple(passages.values()), tuple(chosen))


def _unambiguous(question: str, knowledge: str, asked: Sequence[str], texts: Iterable[str]) -> bool:
    """The scripted server answers the first question it finds in a prompt: no question may contain
    another, nor sit inside a passage that a prompt may carry."""
    if any(question in other or other in question or other in knowledge for other in asked):
        return False
    return not any(question in text for text in (*texts, knowledge))


def cache_root() -> Path:
    return Path(os.environ.get("RAGPULSE_CACHE") or Path.home() / ".cache" / "ragpulse")


def capture_key(chosen: corpus.Corpus) -> str:
    digest = hashlib.sha256()
    for path in _KEYED_FILES:
        digest.update(path.read_bytes())
    digest.update(chosen.to_json().encode())
    return digest.hexdigest()[:12]


def cached_capture(
    combinations: Sequence[tuple[str, str]], chosen: corpus.Corpus
) -> tuple[Path, dict[str, float]]:
    """The capture folder (its `corpus.json` and one folder per combination), and the seconds each
    combination took to capture now (absent: it was cached)."""
    folder = cache_root() / f"traffic-{capture_key(chosen)}"
    corpus_file = folder / "corpus.json"
    if not corpus_file.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / "corpus.json.partial"
        partial.write_text(chosen.to_json(), encoding="utf-8")
        partial.replace(corpus_file)
    missing = [c for c in combinations if not (folder / combination_name(*c) / _COMPLETE).exists()]
    seconds: dict[str, float] = {}
    if not missing:
        return folder, seconds
    python = instrumentation_python()
    with ScriptedLLMServer(chosen.answers()) as llm:
        for combination in missing:
            name = combination_name(*combination)
            partial, out = folder / f"{name}.partial", folder / name
            shutil.rmtree(partial, ignore_errors=True)
            started = time.perf_counter()
            capture(python, combination, llm.base_url, partial, "--corpus", str(corpus_file), timeout=1800)
            seconds[name] = time.perf_counter() - started
            (partial / _COMPLETE).touch()
            shutil.rmtree(out, ignore_errors=True)  # an interrupted earlier attempt
            partial.rename(out)
            print(f"captured {name} in {seconds[name]:.1f} s: {out}", file=sys.stderr)
    return folder, seconds
