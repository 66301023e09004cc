"""Windows whose soft recalls differ only by float32 rounding are a tie: the tighter window is kept.

A sentence and the pair holding it match a claim with the same words, yet their soft recalls come
from two matrix products whose last bits depend on the products' shapes (and on the CPU's BLAS
kernels). Before ties were made explicit, the pair won this case by ~1e-8 on one machine: the reason
quoted both sentences, and whether an antonym was found depended on the CPU. The passage and the claim
are real text (HaluEval summarization, a CNN/DailyMail article and a model's summary of it).
"""

from __future__ import annotations

from evaluators.offline.features import GroundingFeaturizer, prepare

PASSAGE = (
    "Mathieson can be heard laughing while she watches Gizmo in action. When he reaches her on the floor, "
    "he eventually steps back down to four paws. Mathieson said Gizmo performed the trick because he was "
    "unsure how to walk in his new black boots. To date the video of his circus-like trick has been "
    "watched more than 80,000 times. Like\xa0Mathieson, many viewers were left with smiles planted on their "
    "faces. Forget sit and lie down: This skillful pooch has mastered the art of paw-stand walking."
)
CLAIM = (
    "Footage shows him taking a few steps forwards before planting down his front feet and launching his "
    "back legs vertically in the air."
)


def test_a_rounding_tie_keeps_the_single_sentence() -> None:
    evidence = GroundingFeaturizer().evidence(CLAIM, prepare((PASSAGE,)))
    assert evidence.best_window is not None and evidence.best_window.single
    assert evidence.best_window.text.startswith("Like\xa0Mathieson, many viewers")
