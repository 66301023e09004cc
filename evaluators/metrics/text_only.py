"""Text metrics never read an image passage as text: they score the case without them.

A data URI is base64, a URL is an address: neither is evidence a text judge can weigh, and a
megabyte of base64 in a claim-extraction prompt is pure cost. So every metric that does not judge
images (`Metric.reads_images` False) gets the case with the image passages left out of
`retrieval_context` and `context`, and its verdicts are put back at the passages' real positions
(`result.at_passage_positions`): a supporting id still names the right passage, and a left-out image
keeps its rank slot with a verdict that judges nothing. Ids (`retrieved_context_ids`) are untouched:
ranking by id does not read passages. A case whose context holds only images is unmeasured, saying
that the multi-modal metrics judge it.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.case import TestCase
from evaluators.images import image_positions
from evaluators.result import VerdictRecord, at_passage_positions

IMAGES_ONLY = (
    "the context holds only image passages ({n}), which a text metric does not read: "
    "multimodal_faithfulness and multimodal_relevance judge images"
)
_NOT_READ = "an image passage: a text metric does not read it"


@dataclass(frozen=True, slots=True)
class TextOnly:
    """A case without its image passages, and where the kept passages were."""

    case: TestCase
    kept: list[int]  # positions in the full retrieval context of the passages kept
    left_out: list[int]  # positions of the image passages
    images: int  # image passages left out of retrieval_context and context together

    @property
    def reason(self) -> str:
        return IMAGES_ONLY.format(n=self.images)

    def restore(self, verdicts: list[VerdictRecord]) -> list[VerdictRecord]:
        """The verdicts against the full retrieval context (see `result.at_passage_positions`)."""
        return at_passage_positions(verdicts, self.kept, self.left_out, _NOT_READ)


def without_images(case: TestCase) -> TextOnly | None:
    """The text-only view of a case, or None when it has no image passage (the common case: no copy)."""
    retrieval = list(case.retrieval_context or [])
    context = list(case.context or [])
    left_out, in_context = image_positions(retrieval), image_positions(context)
    if not left_out and not in_context:
        return None
    kept = [i for i in range(len(retrieval)) if i not in set(left_out)]
    text_context = [p for i, p in enumerate(context) if i not in set(in_context)]
    update = {
        "retrieval_context": [retrieval[i] for i in kept] or None,
        "context": text_context or None,
    }
    return TextOnly(case.model_copy(update=update), kept, left_out, len(left_out) + len(in_context))
