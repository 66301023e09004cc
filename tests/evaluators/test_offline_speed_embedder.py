"""The offline embedder's speed-ups change no number: wordllama's own vectors to the bit, the ids the
tokenizer gives for a whole text, and a vector cache that never leaks between models or callers."""

from __future__ import annotations

import hashlib
import importlib.util
import random
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluators import TestCase, create_metric, evaluate
from evaluators.judges.base import VerdictTask
from evaluators.offline import OfflineJudge
from evaluators.offline.embedder import VectorCache, vector_cache
from evaluators.offline.wordllama_table import (
    TOKENIZES_BY_WORD,
    WordLlamaTable,
    _pieces,
    _tokenizes_by_word,
    _words,
    load_wordllama,
    wordllama_model,
)

TEXTS = [
    "",
    " ",
    "  two  spaces  between, and trailing  ",
    "tab\tand\nnew line\r\nand a carriage return",
    "Unicode: café, naïve, 日本語のテキスト, emoji 🚀 and a non-breaking\u00a0space",
    "<s> special </s> tokens <unk> inside text",
    "a literal ▁ metaspace and ▁▁ two",
    "Numbers: 1,000.50 dollars, $3, 45% and the 21st of May 1962.",
    "x" * 3000,
    "The Eiffel Tower is 330 metres tall. It was built for the 1889 World's Fair in Paris.",
]
FIVE = ["faithfulness", "answer_relevancy", "contextual_relevancy", "context_utilization", "hallucination"]


@pytest.fixture(scope="module")
def reference() -> Any:
    """wordllama's own model and inference code: what the embedder must reproduce exactly."""
    import wordllama
    from wordllama import WordLlama

    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


def fuzz(seed: int, n: int) -> list[str]:
    """Random texts over the characters a tokenizer can trip on (spaces, '▁', special tokens)."""
    rng = random.Random(seed)
    alphabet = [
        *"ab c  .,\n\t-'’é日本🚀x1▁<>/",
        "  ",
        "<s>",
        "</s>",
        " <unk> ",
        "\u00a0",
        "\u200b",
        " the",
        "ing ",
    ]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(n)]


def test_vectors_equal_wordllamas_own_to_the_bit(reference: Any) -> None:
    table = wordllama_model()
    assert np.array_equal(table.embedding, np.asarray(reference.embedding, dtype=np.float32))
    texts = [*TEXTS, *fuzz(1, 300)]
    for start in range(0, len(texts), 37):  # batches of mixed lengths: wordllama pads them
        batch = texts[start : start + 37]
        assert np.array_equal(table.embed(batch), reference.embed(batch, norm=False))
    one_by_one = np.vstack([table.embed([t]) for t in TEXTS])
    assert np.array_equal(one_by_one, table.embed(TEXTS))  # a row does not depend on its batch


def test_tokenizing_word_by_word_gives_the_ids_of_the_whole_text() -> None:
    table = wordllama_model()
    texts = [*TEXTS, *fuzz(2, 3000)]
    expected = [e.ids for e in table.tokenizer.encode_batch(texts, add_special_tokens=False)]
    for _ in range(2):  # the second time from the word cache
        assert [
            ids for start in range(0, len(texts), 50) for ids in table.token_ids(texts[start : start + 50])
        ] == expected


def sentences(seed: int, n: int) -> list[str]:
    """Random texts of words joined by single spaces (the texts `_words` splits the fast way)."""
    rng = random.Random(seed)
    letters = [*"abcxyz.,-'’é日🚀1<>/\n\t", "\u00a0", "the", "ing"]

    def word() -> str:
        return "".join(rng.choice(letters) for _ in range(rng.randint(1, 8)))

    return [" ".join(word() for _ in range(rng.randint(1, 12))) for _ in range(n)]


def test_splitting_on_single_spaces_gives_the_words_the_pieces_give() -> None:
    texts = [*TEXTS, *fuzz(4, 3000), *sentences(5, 3000), "a", "a b", " a", "a ", "a  b", "a ▁b", "▁"]
    assert [_words(t) for t in texts] == [_pieces(t) for t in texts]
    assert sum("" not in t.split(" ") and "▁" not in t for t in texts) > 3000  # the fast way is taken


def test_new_words_read_from_the_bpe_model_get_the_ids_each_gets_encoded_alone() -> None:
    table = load_wordllama()  # its own word cache
    texts = [*TEXTS, *fuzz(6, 2000), *sentences(7, 2000)]
    texts = [t for t in texts if not any(s in t for s in table._specials)]  # those go whole
    words = sorted({w for t in texts for w in _words(t)} - {""})  # '' (a trailing space) is never missing
    assert sum(w[0] not in " ▁" for w in words) > 1000 and sum(w[0] in " ▁" for w in words) > 50
    alone = dict(zip(words, table._whole(words), strict=True))
    found = {w: array(table._code, packed).tolist() for w, packed in table._word_ids(words).items()}
    assert found == alone


def test_the_packaged_tokenizer_taken_as_word_by_word_is_proven_so() -> None:
    """`TOKENIZES_BY_WORD` spares the vocabulary scan at start-up: the scan must agree."""
    spec = importlib.util.find_spec("wordllama")
    assert spec is not None and spec.submodule_search_locations
    packaged = (
        Path(next(iter(spec.submodule_search_locations))) / "tokenizers" / "l2_supercat_tokenizer_config.json"
    )
    assert hashlib.sha256(packaged.read_bytes()).hexdigest() in TOKENIZES_BY_WORD  # else: re-prove, update
    table = wordllama_model()
    assert table._by_word
    assert _tokenizes_by_word(table.tokenizer)  # the scan the digest spares


def test_a_tokenizer_that_may_merge_across_words_tokenizes_whole_texts() -> None:
    from tokenizers import Tokenizer, pre_tokenizers

    tokenizer = Tokenizer.from_str(wordllama_model().tokenizer.to_str())
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()  # not the normalisation the proof needs
    table = WordLlamaTable(wordllama_model().embedding, tokenizer)
    assert not table._by_word
    texts = fuzz(3, 200)
    assert table.token_ids(texts) == [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


class Counting:
    """A deterministic embedding (from the text's hash) that records every batch it computes."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.vstack([expected_row(t) for t in texts])


def expected_row(text: str) -> np.ndarray:
    return np.random.default_rng(abs(hash(text)) % 2**32).random(8, dtype=np.float32)


def test_the_cache_embeds_each_missing_text_once_in_one_batch_and_keeps_its_newer_half() -> None:
    cache, compute = VectorCache(capacity=4), Counting()
    rows = cache.embed(["a", "b", "a"], compute)
    assert compute.batches == [["a", "b"]]
    assert np.array_equal(rows, np.vstack([expected_row("a"), expected_row("b"), expected_row("a")]))
    cache.embed(["a", "c", "d"], compute)  # 'a' cached: only 'c' and 'd' are computed
    assert compute.batches == [["a", "b"], ["c", "d"]] and len(cache) == 4
    cache.embed(["e"], compute)  # full: the newer half stays ('d', 'e')
    assert len(cache) == 2
    rows = cache.embed(["d", "e", "a"], compute)
    assert compute.batches == [["a", "b"], ["c", "d"], ["e"], ["a"]]
    assert np.array_equal(rows, np.vstack([expected_row(t) for t in "dea"]))
    assert len(cache) == 3


def test_the_cache_answers_fresh_arrays_that_callers_may_change() -> None:
    cache = VectorCache()
    first = cache.embed(["a"], Counting())
    first *= 0.0
    assert np.array_equal(cache.embed(["a"], Counting()), expected_row("a")[None, :])


def test_the_cache_is_consistent_under_threads() -> None:
    cache, texts, errors = VectorCache(capacity=20), [f"text {i}" for i in range(50)], []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(300):
            batch = rng.sample(texts, 5)
            if not np.array_equal(
                cache.embed(batch, Counting()), np.vstack([expected_row(t) for t in batch])
            ):
                errors.append(batch)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(cache) <= 20


class Constant:
    """A user's own embedder: every text the same vector (so every cosine is 1)."""

    name = "constant"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 4), dtype=np.float32) / 2.0


async def test_one_models_cache_never_answers_for_another_embedder() -> None:
    assert vector_cache("wordllama/l2_supercat_256") is vector_cache("wordllama/l2_supercat_256")
    assert vector_cache("wordllama/l2_supercat_256") is not vector_cache("minilm/some/path")
    items, question = ["Golden retrievers need an hour of exercise a day."], ["How tall is the Eiffel Tower?"]
    wordllama = await OfflineJudge().verdicts(items, question, VerdictTask.RELEVANT)
    constant = await OfflineJudge(embedder=Constant()).verdicts(items, question, VerdictTask.RELEVANT)
    assert "similarity 1.00" in constant[0].reason and "similarity 1.00" not in wordllama[0].reason


class UncachedWordLlama:
    """The embedder as it was before the cache and the word tokenizer: wordllama's own code."""

    name = "wordllama"

    def __init__(self, reference: Any) -> None:
        self.reference = reference

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.reference.embed([t or " " for t in texts], norm=False)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return vectors / norms


def outcomes(cases: list[TestCase], judge: OfflineJudge) -> list[Any]:
    result = evaluate(cases, [create_metric(name) for name in FIVE], judge)
    return [
        (r.name, r.score, [(v.item, v.verdict, v.reason) for v in r.verdicts])
        for c in result.cases
        for r in c.results
    ]


def test_the_five_metrics_score_the_same_cold_warm_and_without_the_cache(reference: Any) -> None:
    passages = [
        "The Eiffel Tower was built by Gustave Eiffel's company for the 1889 World's Fair in Paris.",
        "The Eiffel Tower is 330 metres tall and was the tallest man-made structure until 1930.",
        "Golden retrievers need at least an hour of exercise every day.",
    ]
    cases = [
        TestCase(
            input=f"How tall is the Eiffel Tower? (asked {i} times)",
            actual_output=f"The Eiffel Tower is {330 + i} metres tall. It was built for the 1889 Fair.",
            retrieval_context=passages,
            context=passages,
        )
        for i in range(4)
    ]
    before = outcomes(cases, OfflineJudge(embedder=UncachedWordLlama(reference)))
    assert (
        outcomes(cases, OfflineJudge()) == before
    )  # cold: these questions and answers never embedded before
    assert outcomes(cases, OfflineJudge()) == before  # warm


def test_a_word_alone_gets_the_ids_its_encoding_alone_gives() -> None:
    """Soft alignment reads a word's ids from the embedder's word cache (`alignment._vector`): they
    must be the tokenizer's for the word alone, whatever the word (the judge's `words` of any script,
    '▁', special tokens, digits)."""
    from evaluators.offline.text import words

    table = load_wordllama()
    found = {w for t in [*TEXTS, *fuzz(8, 300)] for w in [*words(t), *t.split()]}
    found |= {"▁", "a▁b", "▁x", "<s>", "</s>", "<unk>", "x<s>y", "1889", "Zürich", "東京", "ℌ"}
    found = sorted(found - {""})
    assert len(found) > 500
    expected = [table.tokenizer.encode(w, add_special_tokens=False).ids for w in found]
    assert [table.token_ids([w])[0] for w in found] == expected


def test_a_cached_word_asked_alone_gets_the_ids_its_encoding_alone_gives() -> None:
    """`token_ids([word])` answers a cached word from the cache: every key (spaced pieces and '▁' ones
    too) must be the text it stands for; '' (a trailing space inside a text) is not."""
    table = load_wordllama()
    table.token_ids([*TEXTS, *fuzz(9, 500), *sentences(10, 500)])
    keys = sorted(set(table._words) - {""})
    assert len(keys) > 1000 and any(k[0] in " ▁" for k in keys)
    expected = [table.tokenizer.encode(k, add_special_tokens=False).ids for k in keys]
    assert [table.token_ids([k])[0] for k in keys] == expected
    assert table.token_ids([""]) == [[]]


def test_ids_beyond_a_smaller_table_are_clipped_to_its_last_row() -> None:
    """wordllama clips token ids beyond its table; the packed ids are clipped the same way."""
    full = wordllama_model()
    table = WordLlamaTable(full.embedding[:1000], full.tokenizer, by_word=True)
    assert table._clip
    texts = [*TEXTS, *sentences(11, 50)]
    for text, row in zip(texts, table.embed(texts), strict=True):
        ids = [min(i, 999) for i in full.token_ids([text])[0]]
        expected = np.add.reduce(full.embedding[ids], axis=0) / len(ids) if ids else np.zeros(256)
        assert np.array_equal(row, expected)


def test_a_full_word_cache_keeps_its_newer_half(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its bound the word cache keeps the words met last (and the lone trailing space), as the
    vector caches do, instead of starting empty; ids stay those each word's encoding gives."""
    import evaluators.offline.wordllama_table as wordllama_table

    monkeypatch.setattr(wordllama_table, "_WORDS_CACHED", 100)
    table = load_wordllama()
    words = list(dict.fromkeys(w for t in sentences(12, 200) for w in t.split(" ") if w))[:150]
    assert len(words) == 150
    for word in words:
        assert table.token_ids([word]) == [table.tokenizer.encode(word, add_special_tokens=False).ids]
    assert set(table._words) == {"", *words[50:]}  # at the 101st word: the newer 50 kept, then 50 more
