"""The word-rarity table that weights content words: a rare word ('Mumbai', '1962') matters more.

Built at training time (`scripts/train_offline_judge.py`) from document frequencies over packaged
text (HaluEval news documents and the training split's contexts) and shipped gzipped inside the
package, so nothing is fetched at run time.
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from evaluators.offline.text import content_stems

IDF_PATH = Path(__file__).with_name("data") / "idf.json.gz"
_COMMON_DF_SHARE = 0.02  # a stem in >= 2% of documents is a common word, not a name
_WEIGHT_FLOOR_IDF = 3.0  # words at least this common ('came', 'next', 'using') are paraphrase glue


class IdfTable:
    """Inverse document frequencies of stems; an unseen stem counts as rarest."""

    def __init__(self, n_docs: int, df: dict[str, int]) -> None:
        self.n_docs = n_docs
        self.df = df
        self.max_idf = math.log((n_docs + 1) / 1) + 1.0
        self._idf = {s: math.log((n_docs + 1) / (d + 1)) + 1.0 for s, d in df.items()}
        self.common = frozenset(s for s, d in df.items() if d >= _COMMON_DF_SHARE * n_docs)

    def __call__(self, stem: str) -> float:
        return self._idf.get(stem, self.max_idf)

    def weight(self, stem: str) -> float:
        """How much a word counts as evidence: IDF above the glue-word level, so that a paraphrase's
        'came out' or 'next' barely matters while a missing 'Mumbai' or '1962' dominates."""
        return max(self(stem) - _WEIGHT_FLOOR_IDF, 0.25)

    @property
    def max_weight(self) -> float:
        return self.max_idf - _WEIGHT_FLOOR_IDF

    @classmethod
    def build(cls, documents: Iterable[str], *, min_df: int = 2) -> IdfTable:
        counts: Counter[str] = Counter()
        n_docs = 0
        for doc in documents:
            n_docs += 1
            counts.update(set(content_stems(doc)))
        return cls(n_docs, {s: d for s, d in counts.items() if d >= min_df})

    def save(self, path: Path = IDF_PATH) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"n_docs": self.n_docs, "df": dict(sorted(self.df.items()))}
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as fh:
            json.dump(payload, fh, separators=(",", ":"))

    @classmethod
    def load(cls, path: Path = IDF_PATH) -> IdfTable:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            payload = json.load(fh)
        return cls(int(payload["n_docs"]), {str(k): int(v) for k, v in payload["df"].items()})


@cache
def default_idf() -> IdfTable:
    """The packaged table, loaded once per process."""
    return IdfTable.load()
