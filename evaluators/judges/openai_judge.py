"""`OpenAIJudge`: a judge on any OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama, llama.cpp, LiteLLM).

This module only writes prompts and reads replies; `transport.py` owns retries, structured-output
fallback, repair, caching and accounting. Every operation is one chat call however many items it
judges, which is where the cost advantage over per-claim or per-node judging comes from.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence

import openai

from evaluators.images import image_url, is_image
from evaluators.judges import matching, prompts
from evaluators.judges.accounting import DEFAULT_PRICES, CallRecord, Price
from evaluators.judges.base import (
    ExtractKind,
    JudgeInfo,
    Questions,
    RubricScore,
    Usage,
    Verdict,
    VerdictCheck,
    VerdictTask,
)
from evaluators.judges.replies import InvalidReplyError, TokenLogprobs, UserContent
from evaluators.judges.schemas import (
    ChecksReply,
    ItemsReply,
    JudgedItemsReply,
    QuestionsReply,
    RubricReply,
    StepsReply,
    VerdictReply,
    VerdictsReply,
)
from evaluators.judges.transport import ChatTransport, StructuredMode
from evaluators.redaction import guard_logs, remember, url_credentials, without_credentials

_CHECK_NAMES = "ABCDEFGH"


class OpenAIJudge:
    """An LLM judge over the `openai` client. The API key is read from the environment only."""

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        embedding_model: str = "text-embedding-3-small",
        timeout_s: float = 30.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
        prices: Mapping[str, Price] | None = None,
        cache_size: int = 2048,
        structured_output: StructuredMode = "auto",
        use_logprobs: bool = True,
        vote_temperature: float = 0.7,
        on_call: Callable[[CallRecord], None] | None = None,
        client: openai.AsyncOpenAI | None = None,
        name: str = "openai",
    ) -> None:
        if client is None:
            # Local servers (vLLM, Ollama, llama.cpp) ignore the key but the client insists on one.
            api_key = os.environ.get(api_key_env) or "unset"
            client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)
        url = str(client.base_url)
        remember(url_credentials(url))  # its user:pass goes out as Basic auth: scrubbed from all output
        guard_logs()  # httpx names the URL, userinfo included, in a log line per request
        self.info = JudgeInfo(judge=name, model=model, extra={"base_url": without_credentials(url)})
        self.embedding_model = embedding_model
        self.use_logprobs = use_logprobs
        self.vote_temperature = vote_temperature
        self._transport = ChatTransport(
            client,
            judge_name=name,
            model=model,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            max_backoff_s=max_backoff_s,
            prices=DEFAULT_PRICES if prices is None else prices,
            cache_size=cache_size,
            structured_output=structured_output,
            on_call=on_call,
        )

    def usage(self) -> Usage:
        total = self._transport.ledger.total
        return total.copy()

    async def extract(
        self, text: str, kind: ExtractKind, *, question: str | None = None, limit: int | None = None
    ) -> list[str]:
        parts = [prompts.extract_instruction(kind)]
        if limit:
            parts.append(f"At most {limit} items.")
        if question:
            parts.append(f"QUESTION (for context only):\n{prompts.fence('QUESTION', question)}")
        parts.append(prompts.fence("TEXT", text))
        reply = await self._transport.structured(
            kind.value, prompts.SYSTEM_PROMPT, "\n".join(parts), ItemsReply
        )
        items = [item.strip() for item in reply.value.items if item.strip()]
        return items[:limit] if limit else items

    async def verdicts(
        self, items: Sequence[str], references: Sequence[str], task: VerdictTask, *, sample: int = 0
    ) -> list[Verdict]:
        if not items:
            return []
        user = "\n".join(
            [
                f"For each item answer {prompts.verdict_instruction(task)}.",
                prompts.verdict_rules(),
                f"REFERENCES:\n{prompts.fence('REFERENCES', list(references))}",
                f"ITEMS:\n{prompts.fence('ITEMS', list(items))}",
            ]
        )

        matcher = matching.Matcher(items)  # a verdict goes to the item it names, not its place in the list
        try:
            reply = await self._transport.structured(
                f"verdicts_{task.value}",
                prompts.SYSTEM_PROMPT,
                user,
                VerdictsReply,
                check=matcher.check,
                tolerate=matcher.usable,
                temperature=self.vote_temperature if sample else 0.0,
            )
        except InvalidReplyError as error:
            raise matcher.error(error) from None
        return matcher.verdicts(reply.value, len(references))

    async def verdicts_multi(
        self, items: Sequence[str], checks: Sequence[VerdictCheck]
    ) -> list[list[Verdict]]:
        if not items or not checks:
            return [[] for _ in checks]
        if len(checks) > len(_CHECK_NAMES):  # more than one prompt can name: one call per eight
            size = len(_CHECK_NAMES)
            parts = await asyncio.gather(
                *(self.verdicts_multi(items, checks[i : i + size]) for i in range(0, len(checks), size))
            )
            return [verdicts for part in parts for verdicts in part]
        lines = ["Judge every item with each check, in check order:"]
        for name, (_references, task) in zip(_CHECK_NAMES, checks, strict=False):
            lines.append(
                f"Check {name} [{task.value}]: answer "
                f"{prompts.verdict_instruction(task)}, "
                f"with REFERENCES = REFERENCES_{name}."
            )
        lines.append(f"{prompts.verdict_rules()} Each item gets {len(checks)} verdicts, one per check.")
        for name, (references, _task) in zip(_CHECK_NAMES, checks, strict=False):
            lines.append(f"REFERENCES_{name}:\n{prompts.fence(f'REFERENCES_{name}', list(references))}")
        lines.append(f"ITEMS:\n{prompts.fence('ITEMS', list(items))}")

        matcher = matching.Matcher(items, len(checks))
        try:
            reply = await self._transport.structured(
                "checks",
                prompts.SYSTEM_PROMPT,
                "\n".join(lines),
                ChecksReply,
                check=matcher.check,
                tolerate=matcher.usable,
            )
        except InvalidReplyError as error:
            raise matcher.error(error) from None
        return matcher.check_verdicts(reply.value, checks)

    async def extract_verdicts(
        self, text: str, kind: ExtractKind, references: Sequence[str], task: VerdictTask
    ) -> list[tuple[str, Verdict]]:
        user = "\n".join(
            [
                prompts.extract_instruction(kind),
                f"Then, for each item, answer {prompts.verdict_instruction(task)}.",
                prompts.instruction("reason", prompts.REASON_RULE),
                f"REFERENCES:\n{prompts.fence('REFERENCES', list(references))}",
                prompts.fence("TEXT", text),
            ]
        )
        reply = await self._transport.structured(
            f"{kind.value}_{task.value}", prompts.SYSTEM_PROMPT, user, JudgedItemsReply
        )
        return [
            (entry.item.strip(), matching.to_verdict(entry, len(references)))
            for entry in reply.value.items
            if entry.item.strip()
        ]

    async def visual_verdict(
        self, response: str, references: Sequence[str], task: VerdictTask, *, question: str | None = None
    ) -> Verdict:
        """The response judged whole against text and image references (ragas' multi-modal metrics).

        The text stays fenced; each image reference becomes `<image n>` in the fenced REFERENCES and an
        `image_url` content part after the text, so the model sees it and the prompt cannot be forged
        by what a passage says. Without images the request is plain text, as every other operation.
        """
        texts: list[str] = []
        images: list[str] = []
        for reference in references:
            if is_image(reference):
                images.append(image_url(reference))
                texts.append(prompts.IMAGE_PLACEHOLDER.format(n=len(images)))
            else:
                texts.append(reference)
        lines = [prompts.visual_instruction(task), prompts.VISUAL_RULES]
        if question is not None:
            lines.append(f"QUESTION:\n{prompts.fence('QUESTION', question)}")
        lines.append(f"REFERENCES:\n{prompts.fence('REFERENCES', texts)}")
        lines.append(f"RESPONSE:\n{prompts.fence('RESPONSE', response)}")
        user: UserContent = "\n".join(lines)
        if images:
            user = [{"type": "text", "text": user}]
            for n, url in enumerate(images, start=1):
                user.append({"type": "text", "text": f"IMAGE {n}:"})
                user.append({"type": "image_url", "image_url": {"url": url}})
        reply = await self._transport.structured(
            f"visual_{task.value}", prompts.SYSTEM_PROMPT, user, VerdictReply
        )
        return matching.to_verdict(reply.value, len(references))

    async def questions(self, answer: str, n: int = 3) -> Questions:
        user = "\n".join(
            [
                prompts.instruction("questions", prompts.QUESTIONS_INSTRUCTION).format(n=n),
                prompts.fence("ANSWER", answer),
            ]
        )
        reply = await self._transport.structured("questions", prompts.SYSTEM_PROMPT, user, QuestionsReply)
        questions = tuple(q.strip() for q in reply.value.questions if q.strip())[:n]
        return Questions(questions=questions, noncommittal=reply.value.noncommittal)

    async def evaluation_steps(self, criteria: str) -> list[str]:
        user = "\n".join(
            [prompts.instruction("steps", prompts.STEPS_INSTRUCTION), prompts.fence("CRITERIA", criteria)]
        )
        reply = await self._transport.structured("steps", prompts.SYSTEM_PROMPT, user, StepsReply)
        return [step.strip() for step in reply.value.steps if step.strip()]

    async def rubric_score(
        self,
        steps: Sequence[str],
        fields: Mapping[str, str],
        *,
        low: int = 1,
        high: int = 10,
        rubric: str | None = None,
    ) -> RubricScore:
        parts = [
            prompts.instruction("rubric", prompts.RUBRIC_INSTRUCTION).format(low=low, high=high),
            f"STEPS:\n{prompts.fence('STEPS', list(steps))}",
        ]
        if rubric:
            parts.append(f"RUBRIC:\n{prompts.fence('RUBRIC', rubric)}")
        parts.append(f"FIELDS:\n{prompts.fence('FIELDS', dict(fields))}")

        def check(reply: RubricReply) -> str | None:
            return None if low <= reply.score <= high else f"score must be an integer from {low} to {high}"

        reply = await self._transport.structured(
            "rubric",
            prompts.SYSTEM_PROMPT,
            "\n".join(parts),
            RubricReply,
            check=check,
            logprobs=self.use_logprobs,
        )
        probabilities = score_probabilities(reply.content, reply.logprobs, low, high)
        return RubricScore(
            score=float(reply.value.score), reason=reply.value.reason, probabilities=probabilities
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return await self._transport.embed(texts, self.embedding_model)


_SCORE_FIELD = re.compile(r'"score"\s*:\s*(\d+)')


def score_probabilities(
    content: str, logprobs: TokenLogprobs | None, low: int, high: int
) -> dict[int, float] | None:
    """P(score) from the top log-probs of the token that holds the score, when the endpoint sent them."""
    match = _SCORE_FIELD.search(content)
    if not logprobs or not match:
        return None
    offset = 0
    for token, alternatives in logprobs:
        if offset <= match.start(1) < offset + len(token):
            probabilities: dict[int, float] = {}
            for alternative, logprob in alternatives:
                text = alternative.strip()
                if text.isdigit() and low <= int(text) <= high:
                    probabilities[int(text)] = probabilities.get(int(text), 0.0) + math.exp(logprob)
            return probabilities or None
        offset += len(token)
    return None
