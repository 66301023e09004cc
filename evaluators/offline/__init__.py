"""The offline judge: grounding and relevancy verdicts with no API key and no network.

`OfflineJudge` implements the `Judge` protocol on a small calibrated grounding model (IDF-weighted
word recall, numbers, names, negation, novelty against the question) and on embeddings that ship
inside packages (`wordllama` by default, MiniLM as an option). See docs/offline-judge.md for how
good it is and when to switch to an LLM judge. `LearnedJudge` (opt-in) takes its grounding verdicts
from a learned cross-encoder instead (docs/grounding-model.md).
"""

from evaluators.offline.embedder import Embedder, MiniLMEmbedder, WordLlamaEmbedder, make_embedder
from evaluators.offline.judge import OfflineJudge
from evaluators.offline.learned import LearnedJudge

__all__ = ["Embedder", "LearnedJudge", "MiniLMEmbedder", "OfflineJudge", "WordLlamaEmbedder", "make_embedder"]
