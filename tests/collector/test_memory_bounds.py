"""A judge worker's memory stays flat: every cache of the offline judge is bounded by entries, stays at
its bound when filled past it, and what loads on first use is loaded in the fork server (shared by the
workers) rather than in each worker (see docs/offline-judge.md, Memory)."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import evaluators.offline
from evaluators.offline import sentences, wordllama_table
from evaluators.offline.embedder import VectorCache
from evaluators.offline.wordllama_table import wordllama_model

# Unbounded on purpose: one entry per model file a user configures.
MODEL_LOADERS = {"evaluators.offline.embedder._minilm_model", "evaluators.offline.model.load_models"}


def offline_caches() -> Iterator[tuple[str, Any]]:
    """(qualified name, function) of every functools cache defined in an `evaluators.offline` module."""
    for info in pkgutil.iter_modules(evaluators.offline.__path__):
        module = importlib.import_module(f"evaluators.offline.{info.name}")
        for name, value in vars(module).items():
            if hasattr(value, "cache_info") and getattr(value, "__module__", None) == module.__name__:
                yield f"{module.__name__}.{name}", value


def test_every_cache_of_the_offline_judge_is_bounded_by_entries() -> None:
    caches = dict(offline_caches())
    assert len(caches) > 30  # the walk found them
    unbounded = [
        name
        for name, function in caches.items()
        if function.cache_info().maxsize is None
        and inspect.signature(function.__wrapped__).parameters  # a loader without arguments holds one
        and name not in MODEL_LOADERS
    ]
    assert unbounded == []


def test_the_per_passage_cache_stays_at_its_bound_when_filled_past_it() -> None:
    """`_windows` holds the heaviest entries (~10 KB a passage)."""
    bound = sentences._windows.cache_info().maxsize
    assert bound is not None
    for i in range(bound + 200):
        sentences._windows(f"Passage {i} says the tower is {i} metres tall. It opened in {1800 + i}.")
    assert sentences._windows.cache_info().currsize == bound


def test_nupunkt_memoises_no_more_tokens_than_the_judge_bounds_it_to() -> None:
    """nupunkt's own memo of token strings would hold 65,536; the judge lowers it through nupunkt's
    setting (a rename in a nupunkt release would leave it unbounded again: this notices)."""
    import nupunkt.core.tokens as tokens

    assert tokens._DERIVED_CACHE_SIZE == sentences.NUPUNKT_TOKENS_MEMOISED
    for i in range(sentences.NUPUNKT_TOKENS_MEMOISED + 500):
        sentences.sentences(f"Visitor {i} asked about token{i}. It was answered.")
    assert len(tokens._derived_cache) <= sentences.NUPUNKT_TOKENS_MEMOISED


def test_the_vector_cache_stays_at_its_capacity() -> None:
    cache = VectorCache(capacity=8)
    for i in range(50):
        rows = cache.embed([f"text {i}", "text 0"], lambda texts: np.ones((len(texts), 4)))
        assert rows.shape == (2, 4)
        assert len(cache) <= 8


def test_the_word_token_cache_stays_near_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedder's word -> token ids cache keeps its newer half when past its bound: at most the bound
    plus one call's new words (and the empty word it always holds)."""
    monkeypatch.setattr(wordllama_table, "_WORDS_CACHED", 16)
    model = wordllama_model()
    for i in range(100):
        model.token_ids([f"word{i} other{i}"])
        assert len(model._words) <= 16 + 2 + 1


def test_what_loads_on_first_use_is_loaded_before_the_fork() -> None:
    """Importing the worker module (as the fork server does) judges a warm-up case, so tables read
    lazily are in the fork server's memory, shared by every worker, not copied into each."""
    probe = (
        "import json\n"
        "from collector.judging import offline_worker\n"
        "from evaluators.offline import idf, script_tokens, text\n"
        "print(json.dumps({f.__qualname__: f.cache_info().currsize for f in (idf.default_idf,"
        " script_tokens._token_patterns, script_tokens.upper_class, text._native_filler)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == dict.fromkeys(loaded, 1)
