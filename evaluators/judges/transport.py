"""HTTP to an OpenAI-compatible endpoint: retries, structured output, repair, cache, accounting.

Kept apart from `OpenAIJudge` (which only writes prompts) because this is where every failure of a
real endpoint is absorbed: 429/5xx and timeouts are retried with jittered exponential backoff,
servers without `json_schema` support fall back to JSON mode, an invalid reply gets exactly one repair
turn, and every HTTP request is reported once through `on_call` so the collector can count it.
The `openai` client's own retries are off (max_retries=0) so that each request is visible here.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel

from evaluators.judges.accounting import CallLedger, CallOutcome, CallRecord, Price
from evaluators.judges.base import JudgeError
from evaluators.judges.cache import ReplyCache, request_key
from evaluators.judges.prompts import schema_hint
from evaluators.judges.replies import (
    InvalidReplyError,
    StructuredReply,
    TimedResponse,
    UserContent,
    has_images,
    short_error,
    token_logprobs,
    validate_reply,
)
from evaluators.judges.schemas import strict_schema
from evaluators.redaction import redact, url_credentials

log = logging.getLogger(__name__)

R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)

StructuredMode = Literal["auto", "json_schema", "json_object", "prompt"]
_MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "prompt")


class ChatTransport:
    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        judge_name: str,
        model: str,
        timeout_s: float,
        max_retries: int,
        backoff_s: float,
        max_backoff_s: float,
        prices: Mapping[str, Price],
        cache_size: int,
        structured_output: StructuredMode,
        on_call: Callable[[CallRecord], None] | None,
    ) -> None:
        self.client = client
        self.judge_name = judge_name
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.cache = ReplyCache(cache_size)
        self.structured_output = structured_output
        self.ledger = CallLedger(judge_name, prices, on_call)
        self._mode_index = 0 if structured_output == "auto" else _MODES.index(structured_output)
        self.logprobs_supported = True

    # -- structured chat -------------------------------------------------------------------------------
    async def structured(
        self,
        operation: str,
        system: str,
        user: UserContent,
        reply_model: type[M],
        *,
        check: Callable[[M], str | None] | None = None,
        tolerate: Callable[[M], bool] | None = None,
        logprobs: bool = False,
        temperature: float = 0.0,
    ) -> StructuredReply:
        """One validated reply of `reply_model` (plus token log-probs when asked and available).

        `user` is the prompt text, or a list of content parts when images go along (vision). A reply
        that still fails `check` after the repair turn is returned all the same when `tolerate`
        accepts it (a verdict list the caller can partly use); otherwise `InvalidReplyError`.
        """
        key = request_key([self.model, system, user, reply_model.__name__, logprobs, temperature])
        cached = self.cache.get(key)
        if cached is not None:
            self.ledger.add(CallRecord(self.judge_name, self.model, operation, "cached", 0.0), cached=True)
            return cached
        schema = strict_schema(reply_model)
        images = has_images(user)
        mode_index = self._mode_index
        while True:
            mode = _MODES[mode_index]
            messages = self._messages(system, user, operation, schema, mode)
            extra = self._format_kwargs(operation, schema, mode, logprobs and self.logprobs_supported)
            try:
                response = await self._chat(operation, messages, extra, temperature)
                break
            except _Rejected as rejected:
                if images:  # the images, or the output mode? Only a plainer mode that passes can tell
                    if self.structured_output == "auto" and mode_index < len(_MODES) - 1:
                        mode_index += 1
                        continue
                    raise JudgeError(
                        f"{operation}: the judge model does not accept images (HTTP 400: {rejected})"
                    ) from None
                if not self._degrade(mode, "logprobs" in extra):
                    raise JudgeError(
                        f"{operation}: the judge endpoint rejected the request: {rejected}"
                    ) from None
                mode_index = self._mode_index
        if mode_index > self._mode_index:  # images passed in a plainer mode: the mode was refused
            self._mode_index = mode_index
        content = response.content
        value, problem = validate_reply(content, reply_model, check)
        if problem is not None:
            repair: list[ChatCompletionMessageParam] = [
                *messages,
                {"role": "assistant", "content": content},
                {
                    "role": "user",
                    "content": f"That reply is invalid: {problem}. Reply again with only the "
                    "corrected JSON object.",
                },
            ]
            self._account_response(operation, response, "invalid_output")
            response = await self._chat(
                operation, repair, self._format_kwargs(operation, schema, mode, False), temperature
            )
            content = response.content
            value, problem = validate_reply(content, reply_model, check)
            if problem is not None and not (value is not None and tolerate is not None and tolerate(value)):
                self._account_response(operation, response, "invalid_output")
                message = f"{operation}: invalid judge output after one repair: {problem}"
                raise InvalidReplyError(message, value)
        self._account_response(operation, response, "ok")
        reply = StructuredReply(value, content, token_logprobs(response.response))
        self.cache.put(key, reply)
        return reply

    def _degrade(self, rejected_mode: StructuredMode, sent_logprobs: bool) -> bool:
        """After a 400, step down to a plainer request shape; False when nothing plainer is left.

        Concurrent requests may all be rejected at once: only the first one steps down, the others
        simply retry with the mode now in force.
        """
        if _MODES[self._mode_index] != rejected_mode:
            return True
        if self.structured_output == "auto" and self._mode_index < len(_MODES) - 1:
            self._mode_index += 1
            log.info("judge endpoint rejected %s output; using %s", rejected_mode, _MODES[self._mode_index])
            return True
        if sent_logprobs:
            self.logprobs_supported = False
            return True
        return False

    def _messages(
        self, system: str, user: UserContent, name: str, schema: dict[str, Any], mode: str
    ) -> list[ChatCompletionMessageParam]:
        if mode != "json_schema":
            system = f"{system}\n{schema_hint(name, schema)}"
        message: Any = {"role": "user", "content": user}
        return [{"role": "system", "content": system}, message]

    @staticmethod
    def _format_kwargs(name: str, schema: dict[str, Any], mode: str, logprobs: bool) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if mode == "json_schema":
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        elif mode == "json_object":
            extra["response_format"] = {"type": "json_object"}
        if logprobs:
            extra.update(logprobs=True, top_logprobs=20)
        return extra

    async def _chat(
        self,
        operation: str,
        messages: list[ChatCompletionMessageParam],
        extra: dict[str, Any],
        temperature: float,
    ) -> TimedResponse:
        async def call() -> Any:
            return await self.client.chat.completions.create(
                model=self.model,
                messages=messages,
                temperature=temperature,
                timeout=self.timeout_s,
                **extra,
            )

        return TimedResponse(*await self._with_retries(operation, call))

    # -- embeddings --------------------------------------------------------------------------------
    async def embed(self, texts: Sequence[str], model: str) -> list[list[float]]:
        async def call() -> Any:
            return await self.client.embeddings.create(model=model, input=list(texts), timeout=self.timeout_s)

        response, latency, attempt = await self._with_retries("embed", call, model)
        prompt_tokens = response.usage.prompt_tokens if response.usage else 0
        self.ledger.add(
            CallRecord(
                self.judge_name,
                model,
                "embed",
                "ok",
                latency,
                prompt_tokens,
                0,
                self.ledger.cost(model, prompt_tokens, 0),
                attempt,
            )
        )
        vectors = sorted(response.data, key=lambda item: item.index)
        if len(vectors) != len(texts):
            raise JudgeError(f"embed: asked for {len(texts)} vectors, got {len(vectors)}")
        return [list(item.embedding) for item in vectors]

    # -- retries and accounting --------------------------------------------------------------------
    async def _with_retries(
        self, operation: str, call: Callable[[], Awaitable[R]], model: str | None = None
    ) -> tuple[R, float, int]:
        """`call`, retried on rate limits, timeouts, lost connections and server errors; each failed
        attempt is recorded under the model it asked (`model`, default the chat model)."""
        model = model or self.model
        outcome: CallOutcome = "connection_error"
        for attempt in range(1, self.max_retries + 2):
            started = time.monotonic()
            retry_after: float | None = None
            try:
                return await call(), time.monotonic() - started, attempt
            except openai.BadRequestError as error:
                self._failed(operation, model, "bad_request", started, attempt)
                raise _Rejected(short_error(self._scrub(str(error)))) from None
            except openai.RateLimitError as error:
                outcome, retry_after = "rate_limited", _retry_after(error)
            except openai.APITimeoutError:
                outcome = "timeout"
            except openai.APIConnectionError:
                outcome = "connection_error"
            except openai.APIStatusError as error:
                if error.status_code < 500 and error.status_code not in (408, 409):
                    self._failed(operation, model, "client_error", started, attempt)
                    raise JudgeError(
                        f"{operation}: HTTP {error.status_code}: {short_error(self._scrub(str(error)))}"
                    ) from None
                outcome = "server_error"
            self._failed(operation, model, outcome, started, attempt)
            if attempt <= self.max_retries:
                await asyncio.sleep(self._backoff(attempt, retry_after))
        raise JudgeError(f"{operation}: gave up after {self.max_retries + 1} attempts ({outcome})")

    def _failed(self, operation: str, model: str, outcome: CallOutcome, started: float, attempt: int) -> None:
        """A request that got no usable response: counted, with no tokens."""
        latency = time.monotonic() - started
        self.ledger.add(CallRecord(self.judge_name, model, operation, outcome, latency, attempt=attempt))

    def _scrub(self, text: str) -> str:
        """An error body may quote the credentials (some gateways echo the Authorization header: the
        key as Bearer, a URL's user:pass as Basic): never let them reach a reason, a log line, a results
        document or a span attribute. Scrubbed before it is cut, so no half of a secret survives."""
        key = getattr(self.client, "api_key", None)
        keys = [key] if isinstance(key, str) else []
        return redact(text, [*keys, *url_credentials(str(getattr(self.client, "base_url", "")))])

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff_s)
        return min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)

    def _account_response(self, operation: str, timed: TimedResponse, outcome: CallOutcome) -> None:
        usage = getattr(timed.response, "usage", None)
        prompt = (usage.prompt_tokens or 0) if usage else 0
        completion = (usage.completion_tokens or 0) if usage else 0
        self.ledger.add(
            CallRecord(
                self.judge_name,
                self.model,
                operation,
                outcome,
                timed.latency_s,
                prompt,
                completion,
                self.ledger.cost(self.model, prompt, completion),
                timed.attempt,
            )
        )


class _Rejected(Exception):
    """HTTP 400: the endpoint does not accept this request shape (e.g. no json_schema support)."""


def _retry_after(error: openai.APIStatusError) -> float | None:
    value = error.response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
