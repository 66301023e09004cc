"""A small OpenAI-compatible HTTP server with scripted answers, for tests and benchmarks.

It speaks `/v1/chat/completions` and `/v1/embeddings` on 127.0.0.1 so `OpenAIJudge` runs through the
real `openai` client and real HTTP. Answers come from a `JudgeScript`: the server reads the operation
from the requested JSON schema's name (or, in JSON mode, from the schema hint in the system message),
recovers the fenced payloads of the prompt, and answers with the scripted verdicts for those items.
Failure modes are queued per request: "429" (then success), "500", "hang" (longer than the client's
timeout), "malformed" (not JSON), and the misshaped verdict lists of `reply_faults` (scripted verdicts
echo their item's 0-based `index`, as the judge's schema asks). `json_schema_supported=False` rejects
json_schema with a 400 so the JSON-mode fallback runs; `latency_s` adds a fixed delay to every request
(the pipeline benchmark uses 0.2).

Vision: a user message may be a list of content parts; `image_url` parts stand in the fenced
REFERENCES where the prompt writes `<image n>`, so a script keys an image verdict by a substring of the
image's URL. `images_supported=False` answers any request carrying an image with OpenAI's 400 for a
model without vision. An image counts `IMAGE_TOKENS` prompt tokens (OpenAI's low-detail figure).
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evaluators.judges.prompts import COT_REASON_RULE, parse_fenced
from testkit.chat_request import count_tokens, image_or_text, images_of, operation_of, text_of
from testkit.judge_script import JudgeScript
from testkit.reply_faults import MODES, asks_verdicts, misshape

_CHECK = re.compile(r"^Check ([A-H]) \[(\w+)\]", re.MULTILINE)
_AT_MOST = re.compile(r"At most (\d+) items")
_N_QUESTIONS = re.compile(r"Write (\d+) distinct questions")
IMAGE_TOKENS = 85
NO_VISION_MESSAGE = "Invalid content type. image_url is only supported by certain models."
_EXTRACT_KINDS = ("claims", "statements", "truths", "entities", "opinions")


@dataclass
class RecordedRequest:
    path: str
    body: dict[str, Any]
    status: int
    operation: str = ""
    reply: str = ""


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # like a real endpoint, accept bursts of concurrent judge requests


class ScriptedOpenAIServer:
    def __init__(
        self,
        script: JudgeScript | None = None,
        *,
        latency_s: float = 0.0,
        json_schema_supported: bool = True,
        logprobs_supported: bool = True,
        images_supported: bool = True,
        hang_s: float = 5.0,
        port: int = 0,
    ) -> None:
        self.script = script or JudgeScript()
        self.images_supported = images_supported
        self.latency_s = latency_s
        self.json_schema_supported = json_schema_supported
        self.logprobs_supported = logprobs_supported
        self.hang_s = hang_s
        self.requests: list[RecordedRequest] = []
        self._failures: deque[str] = deque()
        self.failing: str | None = None  # a failure mode for every request while set (an outage)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-openai",
            daemon=True,
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fail_next(self, *modes: str) -> None:
        """Queue failure modes for the next requests: "429", "500", "401-echo", "hang", "malformed"
        (not JSON), or, for the next verdict request, a verdict list that does not line up with its
        items (`reply_faults.MODES`)."""
        with self._lock:
            self._failures.extend(modes)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def operations(self) -> list[str]:
        return [r.operation for r in self.chat_requests if r.status == 200]

    # -- request handling (runs in the server's threads) ------------------------------------------
    def handle(
        self, path: str, body: dict[str, Any], authorization: str = ""
    ) -> tuple[int, dict[str, Any] | str, dict[str, str]]:
        if self.latency_s:
            time.sleep(self.latency_s)
        verdicts = asks_verdicts(operation_of(body))
        with self._lock:  # a queued misshaped verdict list waits for a verdict request
            failure = self._failures[0] if self._failures else self.failing
            if self._failures and (verdicts or failure not in MODES):
                self._failures.popleft()
        if failure == "429":
            return 429, {"error": {"message": "rate limited", "type": "rate_limit"}}, {"retry-after": "0"}
        if failure == "401-echo":  # a gateway that quotes the credentials it refused
            message = f"invalid credentials: {authorization}"
            return 401, {"error": {"message": message, "type": "invalid_request_error"}}, {}
        if failure == "500":
            return 500, {"error": {"message": "scripted server error", "type": "server_error"}}, {}
        if failure == "hang":
            self._stopping.wait(self.hang_s)
        if path.endswith("/embeddings"):
            return 200, self._embeddings(body), {}
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}"}}, {}
        response_format = body.get("response_format") or {}
        if response_format.get("type") == "json_schema" and not self.json_schema_supported:
            return (
                400,
                {"error": {"message": "response_format json_schema is not supported", "type": "invalid"}},
                {},
            )
        if not self.images_supported and any(images_of(m) for m in body.get("messages", [])):
            return 400, {"error": {"message": NO_VISION_MESSAGE, "type": "invalid_request_error"}}, {}
        return 200, self._chat(body, malformed=failure == "malformed", misshaped=failure), {}

    def _chat(self, body: dict[str, Any], *, malformed: bool, misshaped: str | None = None) -> dict[str, Any]:
        messages = body.get("messages", [])
        user_message: dict[str, Any] = next((m for m in messages if m["role"] == "user"), {})
        user, images = text_of(user_message), images_of(user_message)
        operation = operation_of(body)
        reply = self._answer(operation, user, images)
        if misshaped in MODES and asks_verdicts(operation):
            reply = misshape(reply, misshaped, parse_fenced(user).get("ITEMS", []))
        content = "this is not json {" if malformed else json.dumps(reply, separators=(",", ":"))
        prompt_text = "".join(text_of(m) for m in messages)
        prompt_tokens = (
            count_tokens(prompt_text)
            + count_tokens(json.dumps(body.get("response_format") or ""))
            + IMAGE_TOKENS * sum(len(images_of(m)) for m in messages)
        )
        choice: dict[str, Any] = {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": content},
        }
        if body.get("logprobs") and self.logprobs_supported and operation == "rubric" and not malformed:
            choice["logprobs"] = {"content": self._rubric_logprobs(content)}
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": count_tokens(content),
                "total_tokens": prompt_tokens + count_tokens(content),
            },
        }

    def _answer(self, operation: str, user: str, images: list[str] | None = None) -> dict[str, Any]:
        fenced = parse_fenced(user)
        script = self.script
        if operation.startswith("visual_"):  # one verdict on the whole response, images in its references
            refs = [image_or_text(ref, images or []) for ref in fenced.get("REFERENCES", [])]
            return script.verdict(operation, str(fenced.get("RESPONSE", "")), refs)
        cot = COT_REASON_RULE in user  # a metric asked for chain-of-thought reasons
        if operation in _EXTRACT_KINDS:
            items = script.extract(fenced.get("TEXT", ""), operation)
            limit = _AT_MOST.search(user)
            return {"items": items[: int(limit.group(1))] if limit else items}
        if operation.startswith("verdicts_"):
            task = operation.removeprefix("verdicts_")
            refs = fenced.get("REFERENCES", [])
            return {
                "verdicts": [
                    {"index": i, **script.verdict(task, item, refs, user, cot=cot)}
                    for i, item in enumerate(fenced.get("ITEMS", []))
                ]
            }
        if operation == "checks":
            checks = _CHECK.findall(user)
            verdicts = [  # per item, one verdict per check
                [
                    script.verdict(task, item, fenced.get(f"REFERENCES_{name}", []), user, cot=cot)
                    for name, task in checks
                ]
                for item in fenced.get("ITEMS", [])
            ]
            return {"items": [{"index": i, "verdicts": v} for i, v in enumerate(verdicts)]}
        if operation == "questions":
            asked = _N_QUESTIONS.search(user)
            n = int(asked.group(1)) if asked else 3
            answer = fenced.get("ANSWER", "")
            questions = script.questions or [f"What is said about {answer[:40]}?" for _ in range(n)]
            return {"questions": questions[:n], "noncommittal": script.noncommittal}
        if operation == "steps":
            return {"steps": script.steps}
        if operation == "rubric":
            return {"reason": "scripted rubric", "score": script.rubric_score}
        kind, _, task = operation.partition("_")
        if kind in _EXTRACT_KINDS and task:
            refs = fenced.get("REFERENCES", [])
            return {
                "items": [
                    {"item": item, **script.verdict(task, item, refs, cot=cot)}
                    for item in script.extract(fenced.get("TEXT", ""), kind)
                ]
            }
        return {"error": f"unknown operation {operation!r}"}

    def _rubric_logprobs(self, content: str) -> list[dict[str, Any]]:
        match = re.search(r'"score":(\d+)', content)
        probabilities = self.script.rubric_probabilities or {self.script.rubric_score: 1.0}
        if not match:
            return []
        pieces = [content[: match.start(1)], match.group(1), content[match.end(1) :]]
        alternatives = [
            {"token": str(s), "logprob": math.log(p), "bytes": None}
            for s, p in probabilities.items()
            if p > 0
        ]
        tokens = []
        for index, piece in enumerate(pieces):
            top = alternatives if index == 1 else [{"token": piece, "logprob": 0.0, "bytes": None}]
            tokens.append({"token": piece, "logprob": 0.0, "bytes": None, "top_logprobs": top})
        return tokens

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        data = [
            {"object": "embedding", "index": i, "embedding": self.script.embed(str(t))}
            for i, t in enumerate(texts)
        ]
        tokens = sum(count_tokens(str(t)) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "scripted"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


def _handler_for(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = {}
            status, payload, headers = server.handle(self.path, body, self.headers.get("authorization", ""))
            text = payload if isinstance(payload, str) else json.dumps(payload)
            operation = operation_of(body) if self.path.endswith("/chat/completions") else "embed"
            server.record(RecordedRequest(self.path, body, status, operation, text))
            encoded = text.encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(encoded)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(encoded)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
