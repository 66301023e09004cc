"""wordllama's packaged model as a token table and a tokenizer, without importing wordllama.

The sentence embedder (`embedder.WordLlamaEmbedder`) and the soft word alignment (`alignment`) both
read it: a text's vector is the mean of its tokens' rows, exactly as `WordLlamaInference.embed`
computes it (a test pins equality to the bit), and a word's token ids are cached once proven to be
the same alone as inside any text (`_tokenizes_by_word`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import threading
from array import array
from collections.abc import Collection, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.offline import bounds

_WORDS_CACHED = bounds.WORDS  # token ids of this many distinct words (~0.5 MB)


_SPACED_NORMALISER = 'Sequence(normalizers=[Prepend(prepend="▁"), Replace(pattern=String(" "), content="▁")])'
_SPANS_A_WORD_START = re.compile("[^▁]▁|▁▁[^▁]")  # a token like this could cross a word's start
_PIECE = re.compile("[ ▁]*[^ ▁]+|[ ▁]+")  # a word with the spaces before it; or trailing spaces


# Tokenizer files (sha256) proven to tokenize word by word, which `_tokenizes_by_word` would scan the
# 32,000-token vocabulary to prove again at each start (~20 ms of the cold start): wordllama's
# l2_supercat tokenizer. A test holds the proof for it; any other file is scanned.
TOKENIZES_BY_WORD = frozenset({"93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68"})


def _tokenizes_by_word(tokenizer: Any) -> bool:
    """True when the tokenizer's ids for a text are the concatenation of its words' ids.

    The Llama-2 tokenizer has no pre-tokenizer: BPE runs over each whole text, which never hits
    its word cache and was ~60% of embedding time. But its normaliser only turns spaces into '▁'
    and prepends one, and no token in its vocabulary contains '▁' after another character or
    '▁▁' before one: no merge can cross the start of a word (with the spaces before it), so
    each word can be tokenized alone, and cached. Any other tokenizer keeps the whole-text way.
    """
    from tokenizers.models import BPE

    model = tokenizer.model
    return (
        tokenizer.pre_tokenizer is None
        and repr(tokenizer.normalizer) == _SPACED_NORMALISER
        and isinstance(model, BPE)
        and model.dropout is None
        and tokenizer.token_to_id("▁") is not None
        and not any(_SPANS_A_WORD_START.search(token) for token in tokenizer.get_vocab())
    )


class WordLlamaTable:
    """wordllama's packaged model as its two parts: the token table and the tokenizer.

    `embed` computes what `WordLlamaInference.embed` computes, the mean of each text's token rows
    (a test pins equality to the bit), but without importing wordllama (its import costs 0.1-0.3 s
    of cold start, pulls in `requests` and configures the root logger), without padding every
    text of a batch to the longest one, and with words' token ids cached (`_tokenizes_by_word`).
    """

    def __init__(self, embedding: np.ndarray, tokenizer: Any, *, by_word: bool | None = None) -> None:
        self.embedding = np.ascontiguousarray(embedding, dtype=np.float32)
        self.tokenizer = tokenizer  # padding and truncation off: ids are the text's tokens only
        self._encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)  # fast: no offsets
        added = getattr(tokenizer, "get_added_tokens_decoder", None)  # special tokens split texts first
        self._specials = tuple(t.content for t in added().values()) if added else ()
        self._by_word = added is not None and (_tokenizes_by_word(tokenizer) if by_word is None else by_word)
        self._space = tokenizer.token_to_id("▁")
        vocabulary = tokenizer.get_vocab_size(with_added_tokens=True)
        self._clip = vocabulary > len(self.embedding)
        self._code = next(c for c in "HIQ" if 256 ** array(c).itemsize >= vocabulary)  # C type of packed ids
        self._words = self._new_words()  # a word (one leading space dropped) -> its ids, packed

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, as the tokenizer gives them for the whole text."""
        if len(texts) == 1 and texts[0] and (packed := self._words.get(texts[0])) is not None:
            return [array(self._code, packed).tolist()]  # a cached word alone (the soft alignment asks so)
        return [array(self._code, packed).tolist() for packed in self._packed_ids(texts)]

    def _packed_ids(self, texts: Sequence[str]) -> list[bytes]:
        """Each text's token ids packed as C integers (`_code`): with words tokenized one by one, a text's
        are its words' packed ids joined. Bytes, not lists of ints: no Python int per id to make and
        read, and nothing for the garbage collector to walk in the word cache."""
        if not self._by_word:
            return list(map(self._pack, self._whole(texts)))
        known = self._words
        if len(known) > _WORDS_CACHED:  # keep the newer half, as `embedder.VectorCache` does; another
            newer = islice(known.items(), len(known) - _WORDS_CACHED // 2, None)  # thread may still read
            known = self._words = self._new_words() | dict(newer)  # the old dict: it stays valid
        split = [None if any(s in t for s in self._specials) else _words(t) for t in texts]
        missing = set(chain.from_iterable(words for words in split if words)).difference(known)
        if missing:
            known.update(self._word_ids(missing))
        whole = iter(self._whole([t for t, words in zip(texts, split, strict=True) if words is None]))
        ids, join = known.__getitem__, b"".join
        return [self._pack(next(whole)) if words is None else join(map(ids, words)) for words in split]

    def _pack(self, ids: Sequence[int]) -> bytes:
        return array(self._code, ids).tobytes()

    def _new_words(self) -> dict[str, bytes]:
        """The word cache, empty but for a lone trailing space (the normaliser prepends to no empty text)."""
        return {"": self._pack([self._space])}

    def _word_ids(self, words: Collection[str]) -> dict[str, bytes]:
        """Each word's ids, packed, from the tokenizer's BPE model itself: a tokenizer proven to go
        word by word (`_tokenizes_by_word`) only prepends '▁' and turns spaces into '▁' before its
        model, and no special token is in a word (texts holding one go whole). Without the encoding
        pipeline, on real text, a new word costs ~3.3 us instead of ~4.2 as a share of one `encode`
        of all of them joined, and a lone word (the soft alignment asks one at a time) ~7 instead of ~16."""
        tokenize, pack = self.tokenizer.model.tokenize, self._pack
        return {w: pack([token.id for token in tokenize("▁" + w.replace(" ", "▁"))]) for w in words}

    def _whole(self, texts: Sequence[str]) -> list[list[int]]:
        if not texts:
            return []
        return [e.ids for e in self._encode(list(texts), add_special_tokens=False)]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Un-normalised mean token rows, one per text (zeros for a text without tokens).

        Each text's rows are summed on their own, in token order: bit for bit wordllama's masked
        sum over a padded batch (numpy's `reduceat` is not), with no padding to allocate."""
        packed = self._packed_ids(texts)
        sums = np.zeros((len(packed), self.embedding.shape[1]), dtype=np.float32)
        lengths = np.ones(len(packed), dtype=np.float32)
        last = len(self.embedding) - 1
        for row, raw in enumerate(packed):
            if raw:
                ids = np.frombuffer(raw, self._code)
                if self._clip:  # wordllama clips ids beyond its table
                    ids = np.minimum(ids, last)
                sums[row] = np.add.reduce(self.embedding.take(ids, axis=0), axis=0)
                lengths[row] = len(ids)
        return sums / lengths[:, None]


def _words(text: str) -> list[str]:
    """The text's words with the spaces before each (`_pieces`), for most texts (single spaces between
    words, none at either end, no '▁') simply its `split(" ")`, which a test holds equal."""
    parts = text.split(" ")
    return parts if "" not in parts and "▁" not in text else _pieces(text)


def _pieces(text: str) -> list[str]:
    """The text's words with the spaces before each; the tokenizer prepends one space to every
    text it is given, so each word but the first gives one back."""
    return [piece if k == 0 else piece[1:] for k, piece in enumerate(_PIECE.findall(text))]


def load_wordllama() -> WordLlamaTable:
    """The `l2_supercat` 256-dim weights and tokenizer from inside the wordllama package (never a
    download); through wordllama's own loader when its files are laid out differently."""
    from tokenizers import Tokenizer

    spec = importlib.util.find_spec("wordllama")  # finds the package without importing it
    root = Path(next(iter(spec.submodule_search_locations or ()), "")) if spec else Path()
    weights = root / "weights" / "l2_supercat_256.safetensors"
    vocabulary = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
    if weights.is_file() and vocabulary.is_file():
        from safetensors import safe_open

        with safe_open(str(weights), framework="np") as tensors:
            embedding = tensors.get_tensor("embedding.weight")
        config = vocabulary.read_bytes()  # read once: parsed, and its digest looked up
        tokenizer = Tokenizer.from_str(config.decode("utf-8"))
        by_word = True if hashlib.sha256(config).hexdigest() in TOKENIZES_BY_WORD else None
    else:
        import wordllama
        from wordllama import WordLlama

        model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        embedding, tokenizer, by_word = model.embedding, model.tokenizer, None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return WordLlamaTable(embedding, tokenizer, by_word=by_word)


_LOAD_LOCK = threading.Lock()  # (module-level: the table loads once per process)
_wordllama: WordLlamaTable | None = None


def wordllama_model() -> WordLlamaTable:
    """wordllama's packaged model (token table + tokenizer), loaded once per process."""
    global _wordllama
    if _wordllama is None:
        with _LOAD_LOCK:
            if _wordllama is None:
                _wordllama = load_wordllama()
    return _wordllama
