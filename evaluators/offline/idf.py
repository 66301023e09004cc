"""The word-rarity table that weights content words: a rare word ('Mumbai', '1962') matters more.

Built at training time (`scripts/train_offline_judge.py`) from document frequencies over packaged
text (HaluEval news documents and the training split's contexts) and shipped gzipped inside the
package, so nothing is fetched at run time.

It also records which stems the corpus writes as names (capitalised mid-sentence more often than
not): a capitalised word opening a sentence is a name only when the corpus says so, so 'Plus',
'Typically' or 'Routine' opening an answer are words while 'Mumbai' stays a name.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from evaluators.offline.text import content_stems

IDF_PATH = Path(__file__).with_name("data") / "idf.json.gz"
_COMMON_DF_SHARE = 0.02  # a stem in >= 2% of documents is a common word, not a name
_WEIGHT_FLOOR_IDF = 3.0  # words at least this common ('came', 'next', 'using') are paraphrase glue
_WORD = re.compile(r"(?<![\w'’-])([A-Za-z][a-z'’-]*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"“(]\s*|\n\s*)$")


class IdfTable:
    """Inverse document frequencies of stems; an unseen stem counts as rarest."""

    def __init__(self, n_docs: int, df: dict[str, int], names: Iterable[str] = ()) -> None:
        self.n_docs = n_docs
        self.df = df
        self.names = frozenset(names)
        self.max_idf = math.log((n_docs + 1) / 1) + 1.0
        self._idf: dict[
            str, float
        ] = {}  # filled on first use: a worker meets a few thousand stems of ~50,000
        self._weight: dict[str, float] = {}  # `weight` of the stems met, likewise
        # Stems that are words, not names: frequent ones, and any the corpus writes in lower case.
        self.common = frozenset(
            s for s, d in df.items() if d >= _COMMON_DF_SHARE * n_docs or (self.names and s not in self.names)
        )

    def __call__(self, stem: str) -> float:
        found = self._idf.get(stem)
        if found is None:
            d = self.df.get(stem)
            if d is None:
                return self.max_idf
            found = self._idf[stem] = math.log((self.n_docs + 1) / (d + 1)) + 1.0
        return found

    def weight(self, stem: str) -> float:
        """How much a word counts as evidence: IDF above the glue-word level, so that a paraphrase's
        'came out' or 'next' barely matters while a missing 'Mumbai' or '1962' dominates."""
        found = self._weight.get(stem)
        if found is None:
            found = max(self(stem) - _WEIGHT_FLOOR_IDF, 0.25)
            if stem in self.df:  # (bounded by the table: numbers and codes are new stems each record)
                self._weight[stem] = found
        return found

    def weights(self, stems: Iterable[str]) -> tuple[float, ...]:
        """`weight` of each stem, the known ones looked up without a call (a node has ~60 stems)."""
        get, weight = self._weight.get, self.weight
        return tuple([get(s) or weight(s) for s in stems])  # (a weight is never 0)

    @property
    def max_weight(self) -> float:
        return self.max_idf - _WEIGHT_FLOOR_IDF

    @classmethod
    def build(cls, documents: Iterable[str], *, min_df: int = 2) -> IdfTable:
        counts: Counter[str] = Counter()
        lower: Counter[str] = Counter()  # documents writing the stem in lower case
        capitalised: Counter[str] = Counter()  # ... capitalised, not at a sentence start
        n_docs = 0
        for doc in documents:
            n_docs += 1
            counts.update(set(content_stems(doc)))
            seen_lower, seen_capitalised = set(), set()
            for match in _WORD.finditer(doc):
                word = match.group(1)
                if word[0].islower():
                    seen_lower.add(word)
                elif not _SENTENCE_START.search(doc[max(0, match.start() - 3) : match.start()]):
                    seen_capitalised.add(word.lower())
            lower.update(stem for w in seen_lower for stem in content_stems(w))
            capitalised.update(stem for w in seen_capitalised for stem in content_stems(w))
        df = {s: d for s, d in counts.items() if d >= min_df}
        return cls(n_docs, df, (s for s in df if capitalised[s] > lower[s]))

    def save(self, path: Path = IDF_PATH) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"n_docs": self.n_docs, "df": dict(sorted(self.df.items())), "names": sorted(self.names)}
        text = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        path.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))  # the same bytes on a retrain

    @classmethod
    def load(cls, path: Path = IDF_PATH) -> IdfTable:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            payload = json.load(fh)
        df = {str(k): int(v) for k, v in payload["df"].items()}
        return cls(int(payload["n_docs"]), df, payload.get("names", ()))


@cache
def default_idf() -> IdfTable:
    """The packaged table, loaded once per process."""
    return IdfTable.load()
