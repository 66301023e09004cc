"""Soft alignment per sentence: a window's soft matches are its sentences' (a pair's the better of
its two), and word vectors are those of each word alone, whatever batch they were computed in.

The judge once aligned every window against its own vocabulary, pairs included; it now aligns each
claim once per sentence and takes the elementwise maximum for a pair. These tests hold the new way
to the old definition on real passages (HaluEval summarization, when installed) and on hand text.
"""

from __future__ import annotations

import numpy as np

from benchmarks import real_records
from evaluators.offline import alignment
from evaluators.offline.claim_view import Terms, claim_view
from evaluators.offline.claims import answer_claims
from evaluators.offline.embedder import VectorCache
from evaluators.offline.idf import default_idf
from evaluators.offline.passage_match import soft_scores, window_vocabulary, window_words
from evaluators.offline.sentences import Window, windows
from evaluators.offline.wordllama_table import wordllama_model

HAND = [
    (
        "The committee postponed the vote because members stayed abroad longer than planned.",
        "Members of the committee remained overseas. The vote was delayed until their return in March. "
        "Each delegate receives a stipend per week.",
    ),
    (
        "Refunds are always paid within seven days to every customer.",
        "Customers get their money back in a week. The office closes at noon on Fridays.",
    ),
]


def _cases(n: int = 60) -> list[tuple[str, str]]:
    cases = list(HAND)
    if real_records.available():
        for record in real_records.make_records(7000, n):
            cases += [(record["actual_output"], node) for node in record["retrieval_context"]]
    return cases


def _old_soft(terms: Terms, window: Window, pool: frozenset[str]) -> np.ndarray:
    """The old definition: the claim's words against the whole window's vocabulary."""
    matches = np.array([1.0 if s in pool else 0.0 for s in terms.stems])
    todo = [i for i, s in enumerate(terms.stems) if s not in pool and terms.softable[i]]
    vocabulary = window_words(window.text)
    if todo and vocabulary:
        claim = alignment.vectors([terms.surface[i] for i in todo])
        matches[todo] = alignment.soft_matches(claim, alignment.vectors(vocabulary))
    return matches


def test_a_pair_window_has_exactly_its_sentences_words() -> None:
    for _, passage in _cases():
        for window in windows(passage, 0):
            if not window.single:
                a, b = window.sentences
                assert window.text == f"{a} {b}"
                assert set(window_words(window.text)) == set(window_words(a)) | set(window_words(b))


def test_soft_matches_per_sentence_equal_those_against_the_whole_window() -> None:
    idf, checked = default_idf(), 0
    for answer, passage in _cases():
        for claim in answer_claims(answer):
            view = claim_view(claim, "", idf)
            terms = view.terms(tuple(False for _ in view.checked))
            for window in windows(passage, 0):
                pool = terms.pool(window.stems, window.parts)
                found = soft_scores(terms, window, pool).matches
                # (float32 products of other shapes: the last bits may differ, ~1e-6 after rescaling)
                np.testing.assert_allclose(found, _old_soft(terms, window, pool), rtol=0, atol=1e-5)
                checked += 1
    assert checked > 50


def test_a_word_vector_does_not_depend_on_its_batch() -> None:
    """A word's unit vector is the mean of its own token rows, normalised, whichever words were
    new in the same call (their ids come from one tokenizer call)."""
    table = wordllama_model()
    texts = [p for _, p in _cases(20)]
    found = sorted({w for t in texts for w in window_words(t)} | {"Zürich", "東京", "1889", "▁x"})
    batch = alignment.vectors(found)  # (some of these may be cached already: either way)
    for word, row in zip(found, batch, strict=True):
        ids = table.tokenizer.encode(word, add_special_tokens=False).ids or [0]
        expected = table.embedding[ids].mean(axis=0)
        expected = expected / np.linalg.norm(expected)
        assert np.array_equal(row, expected), word


def test_the_vector_cache_is_bounded() -> None:
    """Word vectors live in the sentence embedder's bounded cache (`VectorCache`), which keeps its
    newer half when full; a word evicted and computed again gets the same row."""
    assert alignment._UNIT_VECTORS.capacity == alignment._VECTORS_CACHED
    first = alignment.vectors(["alpha"])[0]
    cache = VectorCache(4)
    for word in ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]:
        cache.embed([word], alignment._unit_rows)
    assert len(cache) <= 4
    assert np.array_equal(cache.embed(["alpha"], alignment._unit_rows)[0], first)


def test_a_window_vocabulary_is_its_words_vectors() -> None:
    _, passage = HAND[0]
    for window in windows(passage, 0):
        words, vectors = window_vocabulary(window.text)
        assert words == window_words(window.text)
        assert np.array_equal(vectors, alignment.vectors(words))
