"""What leaves for an external judge: personal data masked, size bounded.

The offline judge runs here and sees the case as it is. An LLM judge is someone else's server, so
the case is rewritten first: e-mail addresses, phone and card numbers (and custom patterns)
become placeholders, numbered per case so that two different numbers stay different (a wrong
phone number in an answer must still contradict the right one in a passage); passages beyond
`max_passages` are left out and longer ones cut at `max_passage_chars`. Every rewrite is counted.
An image passage (`evaluators.images`) goes as it is: cut, it would be a broken image, and masking
reads text, not pixels (the collector already bounded its size when it read the trace).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from collector.judging.scorers import CaseScorer
from collector.metrics import JUDGE_INPUT_REWRITES
from evaluators import CaseResult, TestCase
from evaluators.images import is_image

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_CARD = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_PHONE = re.compile(r"(?<![\w.])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,4}[ .-]\d{2,4}[ .-]\d{2,5}\b")
_PHONE_DIGITS = 9  # fewer digits is a date, a version or a range, not a phone number


class OutboundConfig(BaseModel):
    """What an external judge may see (the offline judge is local and sees everything)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    emails: bool = Field(True, description="Mask e-mail addresses.")
    card_numbers: bool = Field(True, description="Mask payment card numbers (13-19 digits passing Luhn).")
    phone_numbers: bool = Field(True, description="Mask phone numbers (9+ digits in groups).")
    patterns: list[str] = Field(default_factory=list, description="More regular expressions to mask.")
    max_passages: int = Field(20, ge=1, description="Passages sent per case; the rest are left out.")
    max_passage_chars: int = Field(4000, ge=100, description="Longer passages are cut.")

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {pattern!r} ({exc})") from None
        return patterns


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        n = int(char)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


class Outbound:
    """A `CaseScorer` that rewrites each case by `OutboundConfig` before handing it on."""

    def __init__(self, inner: CaseScorer, config: OutboundConfig) -> None:
        self.inner, self.config, self.info = inner, config, inner.info
        self._custom = [re.compile(p) for p in config.patterns]

    async def score(self, case: TestCase, metrics: Sequence[str]) -> CaseResult:
        return await self.inner.score(self.rewrite(case), metrics)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def rewrite(self, case: TestCase) -> TestCase:
        seen: dict[tuple[str, str], str] = {}  # (kind, value) -> placeholder, numbered per case

        def mask(text: str | None) -> str | None:
            return None if text is None else self._mask(text, seen)

        def passages(values: list[str] | None, count: bool = True) -> list[str] | None:
            if values is None:
                return None
            if len(values) > self.config.max_passages and count:
                JUDGE_INPUT_REWRITES.labels("passage_left_out").inc(len(values) - self.config.max_passages)
            kept = []
            for value in values[: self.config.max_passages]:
                if is_image(value):
                    kept.append(value)
                    continue
                if len(value) > self.config.max_passage_chars:
                    if count:
                        JUDGE_INPUT_REWRITES.labels("passage_cut").inc()
                    value = value[: self.config.max_passage_chars]
                kept.append(self._mask(value, seen))
            return kept

        return case.model_copy(
            update={
                "input": mask(case.input),
                "actual_output": mask(case.actual_output),
                "expected_output": mask(case.expected_output),
                "retrieval_context": passages(case.retrieval_context),
                # a live record's context is its retrieved passages: counted once
                "context": passages(case.context, count=case.context != case.retrieval_context),
            }
        )

    def _mask(self, text: str, seen: dict[tuple[str, str], str]) -> str:
        def replace(kind: str, match: re.Match[str]) -> str:
            value = match.group(0)
            digits = re.sub(r"\D", "", value)
            if (kind == "card" and not _luhn(digits)) or (kind == "phone" and len(digits) < _PHONE_DIGITS):
                return value
            key = (kind, re.sub(r"\W", "", value).lower())
            if key not in seen:
                seen[key] = f"[{kind}-{sum(k[0] == kind for k in seen) + 1}]"
                JUDGE_INPUT_REWRITES.labels(f"{kind}_masked").inc()
            return seen[key]

        config = self.config
        if config.emails:
            text = _EMAIL.sub(lambda m: replace("email", m), text)
        if config.card_numbers:
            text = _CARD.sub(lambda m: replace("card", m), text)
        if config.phone_numbers:
            text = _PHONE.sub(lambda m: replace("phone", m), text)
        for pattern in self._custom:
            text = pattern.sub(lambda m: replace("redacted", m), text)
        return text
