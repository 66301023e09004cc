"""What leaves for an external judge: personal data masked, size bounded.

The offline judge runs here and sees the case as it is. An LLM judge is someone else's server, so
the case is rewritten first: e-mail addresses, phone and card numbers, IBANs (and custom patterns)
become placeholders, numbered per case so that two different numbers stay different (a wrong
phone number in an answer must still contradict the right one in a passage); passages beyond
`max_passages` are left out and longer ones cut at `max_passage_chars`; the question, the answer, the
expected and baseline answers and each conversation turn are cut at `max_text_chars` (a 2.8 MB answer
was one request of 1.37 million prompt tokens). Every rewrite is counted, and every result of a case
whose text was cut says so in its reason: a claim past the cut was never judged.
An image passage (`evaluators.images`) goes as it is: cut, it would be a broken image, and masking
reads text, not pixels (the collector already bounded its size when it read the trace).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from collector.judging.scorers import CaseScorer
from collector.metrics import JUDGE_INPUT_REWRITES, JUDGE_INPUT_TRUNCATED
from evaluators import CaseResult, MetricResult, TestCase
from evaluators.images import is_image

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_CARD = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_PHONE = re.compile(r"(?<![\w.])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,4}[ .-]\d{2,4}[ .-]\d{2,5}\b")
_PHONE_DIGITS = 9  # fewer digits is a date, a version or a range, not a phone number
# ISO 13616: country, two check digits, up to 30 letters and digits, printed compact or in groups
# separated by single spaces. Which groups belong to it is settled by the mod-97 check (`_iban_end`).
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}[A-Z0-9]*(?: [A-Z0-9]+){0,9}\b")
# Masked beyond a cut, so that a number straddling the cut is masked whole, or lies wholly past it.
_CUT_SLACK = 256


class OutboundConfig(BaseModel):
    """What an external judge may see (the offline judge is local and sees everything)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    emails: bool = Field(True, description="Mask e-mail addresses.")
    card_numbers: bool = Field(True, description="Mask payment card numbers (13-19 digits passing Luhn).")
    phone_numbers: bool = Field(True, description="Mask phone numbers (9+ digits in groups).")
    ibans: bool = Field(True, description="Mask IBANs (ISO 13616 shape passing the mod-97 check).")
    patterns: list[str] = Field(default_factory=list, description="More regular expressions to mask.")
    max_passages: int = Field(20, ge=1, description="Passages sent per case; the rest are left out.")
    max_passage_chars: int = Field(4000, ge=100, description="Longer passages are cut.")
    max_text_chars: int = Field(
        8000,
        ge=100,
        description="The question, the answer, the expected and baseline answers and each conversation "
        "turn are cut at this many characters (about 2,000 tokens); results then say so in their reason.",
    )

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


def _iban_end(candidate: str) -> int:
    """Where the IBAN that `candidate` starts with ends (the longest prefix ending at a group that
    passes ISO 7064 mod 97-10), 0 if none does: a mistyped IBAN or a part number stays as it is."""
    ends = [i for i, char in enumerate(candidate) if char == " "] + [len(candidate)]
    for end in reversed(ends):
        compact = candidate[:end].replace(" ", "")
        if 15 <= len(compact) <= 34 and 2 <= int(compact[2:4]) <= 98:
            digits = "".join(str(int(char, 36)) for char in compact[4:] + compact[:4])
            if int(digits) % 97 == 1:
                return end
    return 0


class Outbound:
    """A `CaseScorer` that rewrites each case by `OutboundConfig` before handing it on."""

    def __init__(self, inner: CaseScorer, config: OutboundConfig) -> None:
        self.inner, self.config, self.info = inner, config, inner.info
        self._custom = [re.compile(p) for p in config.patterns]

    async def score(self, case: TestCase, metrics: Sequence[str]) -> CaseResult:
        cut: dict[str, int] = {}
        result = await self.inner.score(self.rewrite(case, cut), metrics)
        return _marked(result, cut, self.config.max_text_chars) if cut else result

    def errors(self, metrics: Sequence[str], reason: str) -> list[MetricResult]:
        return self.inner.errors(metrics, reason)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def rewrite(self, case: TestCase, cut: dict[str, int] | None = None) -> TestCase:
        """`case` as an external judge may see it; `cut` gets each text field that was cut, with the
        length it had."""
        seen: dict[tuple[str, str], str] = {}  # (kind, value) -> placeholder, numbered per case
        cut = {} if cut is None else cut

        def text(field: str, value: str) -> str:
            kept, was_cut = self._bounded(value, self.config.max_text_chars, seen)
            if was_cut:
                JUDGE_INPUT_TRUNCATED.labels(field).inc()
                cut[field] = max(cut.get(field, 0), len(value))
            return kept

        def optional(field: str, value: str | None) -> str | None:
            return None if value is None else text(field, value)

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
                value, was_cut = self._bounded(value, self.config.max_passage_chars, seen)
                if was_cut and count:
                    JUDGE_INPUT_REWRITES.labels("passage_cut").inc()
                kept.append(value)
            return kept

        turns = case.turns and [
            turn.model_copy(
                update={
                    "content": text("turn", turn.content),
                    "retrieval_context": passages(turn.retrieval_context),
                }
            )
            for turn in case.turns
        ]
        return case.model_copy(
            update={
                "input": optional("input", case.input),
                "actual_output": optional("actual_output", case.actual_output),
                "expected_output": optional("expected_output", case.expected_output),
                "baseline_output": optional("baseline_output", case.baseline_output),
                "retrieval_context": passages(case.retrieval_context),
                # a live record's context is its retrieved passages: counted once
                "context": passages(case.context, count=case.context != case.retrieval_context),
                "turns": turns,
            }
        )

    def _bounded(self, text: str, limit: int, seen: dict[tuple[str, str], str]) -> tuple[str, bool]:
        """`text` masked and cut at `limit` (and whether it was cut). Only its beginning is read, so a
        huge text costs no more than a short one; masking reaches `_CUT_SLACK` past the cut, so that a
        number straddling the cut is never sent as an unmasked fragment."""
        if len(text) <= limit:
            return self._mask(text, seen), False
        end = limit + _CUT_SLACK
        while True:
            masked = self._mask(text[:end], seen)
            if end >= len(text) or len(masked) >= limit + _CUT_SLACK:
                return masked[:limit], len(masked) > limit
            end += max(end, limit + _CUT_SLACK - len(masked))  # masking shortened it: read further

    def _mask(self, text: str, seen: dict[tuple[str, str], str]) -> str:
        def placeholder(kind: str, value: str) -> str:
            key = (kind, re.sub(r"\W", "", value).lower())
            if key not in seen:
                seen[key] = f"[{kind}-{sum(k[0] == kind for k in seen) + 1}]"
                JUDGE_INPUT_REWRITES.labels(f"{kind}_masked").inc()
            return seen[key]

        def replace(kind: str, match: re.Match[str]) -> str:
            value = match.group(0)
            digits = re.sub(r"\D", "", value)
            if (kind == "card" and not _luhn(digits)) or (kind == "phone" and len(digits) < _PHONE_DIGITS):
                return value
            return placeholder(kind, value)

        def iban(match: re.Match[str]) -> str:
            value = match.group(0)
            end = _iban_end(value)
            return placeholder("iban", value[:end]) + value[end:] if end else value

        config = self.config
        if config.emails:
            text = _EMAIL.sub(lambda m: replace("email", m), text)
        if config.ibans:  # before cards and phones: its groups of digits would read as one
            text = _IBAN.sub(iban, text)
        if config.card_numbers:
            text = _CARD.sub(lambda m: replace("card", m), text)
        if config.phone_numbers:
            text = _PHONE.sub(lambda m: replace("phone", m), text)
        for pattern in self._custom:
            text = pattern.sub(lambda m: replace("redacted", m), text)
        return text


def _marked(result: CaseResult, cut: dict[str, int], limit: int) -> CaseResult:
    """Every result of the case says the judge read a cut text: what it scored is the beginning."""
    note = "the judge read " + ", ".join(
        f"{field} cut to {limit:,} of {length:,} characters" for field, length in cut.items()
    )
    results = [
        r.model_copy(update={"reason": f"{r.reason} ({note})" if r.reason else note}) for r in result.results
    ]
    return result.model_copy(update={"results": results})
