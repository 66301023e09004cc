"""A scripted OpenAI-compatible LLM for the instrumentation conformance apps (standard library only).

The real frameworks talk to it through the real `openai` client, so the instrumentations see real
requests and responses. It serves:

- POST /v1/chat/completions, plain and streamed (SSE, with the usage chunk when the client asks for
  `stream_options.include_usage`). The answer is the scripted one of the first question whose text
  appears in the request's messages (`corpus.answers()` by default), else `corpus.FALLBACK_ANSWER`.
  The reported `model` is the requested one. An agent's request (it offers `tools`) that holds no tool
  result yet is answered with one call of its first tool, the question as the tool's first argument
  (`{"query": "<question>"}`); once a `tool` message is there, the scripted answer as above. A DSPy
  request (its prompt asks for `[[ ## field ## ]]` output fields) gets the answer in that template.
- POST /v1/embeddings: a hashed bag of words (stop words dropped, L2-normalised), as floats or as
  base64 float32 (the `openai` client's default), so vector retrieval is deterministic and meaningful.

Run it alone with `python -m tests.instrumentation.llm_server [--port N] [--corpus FILE]` (the answers
of a `corpus.load` file instead of the built-in apps'): it prints its base URL.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import re
import struct
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.instrumentation.apps import corpus

DIMENSIONS = 64
_STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the of to in on at by for from and or is are be do does did have has how many much what when "
        "who which per can must with into within after before this that it its their they",
    )
)


def tokens(text: str) -> list[str]:
    """Rough token split for `usage` numbers: words and punctuation marks."""
    return re.findall(r"\w+|[^\w\s]", text)


def embed(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in _STOP_WORDS:
            continue
        stem = word[:-1] if len(word) > 3 and word.endswith("s") else word
        vector[zlib.crc32(stem.encode()) % DIMENSIONS] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops its keep-alive connection (an asyncio app closing its loop) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedLLMServer:
    """Threaded HTTP server on 127.0.0.1; `answers` maps question text to the scripted reply."""

    def __init__(self, answers: dict[str, str] | None = None, port: int = 0) -> None:
        self.answers = corpus.answers() if answers is None else answers
        self.requests: list[dict[str, Any]] = []
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="llm-server", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer_for(self, messages: list[dict[str, Any]]) -> str:
        text = "\n".join(_message_text(m) for m in messages)
        return next((a for q, a in self.answers.items() if q in text), corpus.FALLBACK_ANSWER)

    def question_in(self, messages: list[dict[str, Any]]) -> str | None:
        text = "\n".join(_message_text(m) for m in messages)
        return next((q for q in self.answers if q in text), None)

    def tool_call(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The retrieval tool call an agent's first request gets: its first tool, the question as the
        tool's first parameter; None once a tool result is in the messages (or no question is)."""
        messages, tools = body.get("messages") or [], body.get("tools") or []
        question = self.question_in(messages)
        if not tools or question is None or any(m.get("role") == "tool" for m in messages):
            return None
        function = tools[0].get("function") or {}
        parameters = list(((function.get("parameters") or {}).get("properties") or {}).keys())
        arguments = json.dumps({(parameters or ["query"])[0]: question})
        call_id = "call_" + hashlib.sha1(question.encode()).hexdigest()[:16]
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": function.get("name"), "arguments": arguments},
        }

    def chat(self, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
        messages = body.get("messages") or []
        answer = _dspy_fields(self.answer_for(messages), messages)
        prompt_tokens = sum(len(tokens(_message_text(m))) + 4 for m in messages)
        completion_id = "chatcmpl-" + hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:24]
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(tokens(answer)),
            "total_tokens": prompt_tokens + len(tokens(answer)),
        }
        head = {
            "id": completion_id,
            "created": int(time.time()),
            "model": body.get("model", corpus.MODEL),
            "system_fingerprint": "fp_scripted",
        }
        return {**head, "usage": usage}, answer

    def embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get("input", "")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs)
        data = []
        for i, text in enumerate(inputs):
            vector = embed(text if isinstance(text, str) else " ".join(map(str, text)))
            if body.get("encoding_format") == "base64":
                encoded: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            else:
                encoded = vector
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        prompt_tokens = sum(len(tokens(str(t))) for t in inputs)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", corpus.EMBEDDING_MODEL),
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
        }


_DSPY_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]")
_DSPY_ASK = re.compile(r"Respond with the corresponding output fields, starting with (.*)$", re.S)


def _dspy_fields(answer: str, messages: list[dict[str, Any]]) -> str:
    """The answer in DSPy's ChatAdapter template when the last message asks for it: each output field
    under its `[[ ## name ## ]]` header (a reasoning field gets one line), then `[[ ## completed ## ]]`."""
    asked = _DSPY_ASK.search(_message_text(messages[-1])) if messages else None
    if asked is None:
        return answer
    fields = [f for f in _DSPY_FIELD.findall(asked.group(1)) if f != "completed"]
    body = [
        f"[[ ## {f} ## ]]\n{answer if f != 'reasoning' else 'The handbook passage states it.'}"
        for f in fields
    ]
    return "\n\n".join([*body, "[[ ## completed ## ]]"])


def _completion(head: dict[str, Any], answer: str, call: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None if call else answer, "refusal": None}
    if call:
        message["tool_calls"] = [call]
    finish = "tool_calls" if call else "stop"
    return {
        **head,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
    }


def _chunks(
    head: dict[str, Any], answer: str, include_usage: bool, call: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The SSE chunks of a streamed completion: role, content pieces (or the tool call: its name, then
    its arguments), finish, then usage if asked."""
    base = {k: v for k, v in head.items() if k != "usage"} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**base, "choices": [choice]}

    if call:
        named = {
            "index": 0,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        argued = {"index": 0, "function": {"arguments": call["function"]["arguments"]}}
        out = [chunk({"role": "assistant", "content": None, "tool_calls": [named]})]
        out += [chunk({"tool_calls": [argued]}), chunk({}, "tool_calls")]
    else:
        pieces = re.findall(r"\S+\s*", answer) or [""]
        out = [chunk({"role": "assistant", "content": ""})]
        out += [chunk({"content": piece}) for piece in pieces]
        out.append(chunk({}, "stop"))
    if include_usage:
        out.append({**base, "choices": [], "usage": head["usage"]})
    return out


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes: with Nagle's algorithm on, a keep-alive client's
        # delayed ACK held every response ~40 ms (a 400-question run spent 35 of its 37 s waiting).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read the apps' output
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": corpus.MODEL, "object": "model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._json(400, {"error": {"message": "body is not JSON"}})
                return
            server.requests.append({"path": self.path, "body": body})
            if self.path.endswith("/embeddings"):
                self._json(200, server.embeddings(body))
            elif self.path.endswith("/chat/completions"):
                head, answer = server.chat(body)
                call = server.tool_call(body)
                if body.get("stream"):
                    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                    self._sse(_chunks(head, answer, include_usage, call))
                else:
                    self._json(200, _completion(head, answer, call))
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, chunks: list[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for item in chunks:
                self.wfile.write(f"data: {json.dumps(item)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--corpus", type=Path, help="answer this corpus file's questions")
    args = parser.parse_args()
    answers = corpus.load(args.corpus).answers() if args.corpus else None
    server = ScriptedLLMServer(answers, port=args.port).start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
