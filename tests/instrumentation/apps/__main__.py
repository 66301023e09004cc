"""Run one conformance app: `python -m tests.instrumentation.apps --app A --instrumentation I ...`.

It sets up OpenTelemetry with one instrumentation, builds the app against the scripted LLM server,
answers the corpus questions, each inside a root `POST /ask` server span as a web app would, and writes
what it got (trace id, passages, response) to `--expected` and, with `--capture`, what it exported.
`--corpus FILE` (`corpus.load`) replaces the handbook's passages and questions, for the apps in
`CORPUS_APPS`; the scripted LLM server must answer from the same file.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
from pathlib import Path

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from tests.instrumentation.apps import corpus, instrument

APPS = {
    "llamaindex": "llamaindex",
    "langchain": "langchain",
    "haystack": "haystack",
    "openai": "openai_sdk",
    "openai-images": "openai_images",  # multi-modal: retrieved images as image_url parts
    "llamaindex-citations": "llamaindex_citations",  # CitationQueryEngine: answers citing [1], [2]
    # one user's three-turn chat, each turn its own trace, in one session (OpenInference using_session)
    "llamaindex-conversation": "llamaindex_conversation",
    "langchain-conversation": "langchain_conversation",  # the same, session in LangChain run metadata
    "openai-conversation": "openai_conversation",  # the same, each turn an OTel GenAI agent invocation
    # agents retrieving through a tool call (pydantic-ai, langgraph: the agents venv)
    "pydantic-ai": "pydantic_ai_agent",
    "langgraph": "langgraph_agent",
    "llamaindex-agent": "llamaindex_agent",
    "dspy": "dspy_rag",  # DSPy's [[ ## field ## ]] templates (the agents venv)
    "litellm": "litellm_sdk",  # the openai app through LiteLLM (the agents venv)
    "openai-stream": "openai_stream",  # the openai app, streamed (OpenLIT: the openlit venv)
}
CORPUS_APPS = ("llamaindex", "langchain", "haystack", "openai")  # build(..., passages=...)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.instrumentation.apps", description=__doc__)
    parser.add_argument("--app", choices=sorted(APPS), required=True)
    parser.add_argument("--instrumentation", choices=instrument.INSTRUMENTATIONS, required=True)
    parser.add_argument("--llm-base-url", required=True, help="the scripted LLM server, e.g. http://h:p/v1")
    parser.add_argument("--service-name", help="resource service.name (default: APP-INSTRUMENTATION)")
    parser.add_argument(
        "--endpoint",
        default="http://127.0.0.1:4318",
        help="OTLP base URL (http), host:port (grpc), or none (capture only)",
    )
    parser.add_argument("--protocol", choices=("http", "grpc"), default="http")
    parser.add_argument("--expected", type=Path, help="write the questions, passages and answers here")
    parser.add_argument("--capture", type=Path, help="also write the exported OTLP JSON into this folder")
    parser.add_argument(
        "--corpus",
        type=Path,
        help=f"index these passages, ask these questions (apps: {', '.join(CORPUS_APPS)})",
    )
    args = parser.parse_args(argv)
    if args.corpus and args.app not in CORPUS_APPS:
        parser.error(f"--corpus: the {args.app} app asks its own questions")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no usage telemetry from a test app
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LiteLLM's and DSPy's bundled model map
    api_key = os.environ.get("OPENAI_API_KEY", "sk-scripted-llm-server")
    service_name = args.service_name or f"{args.app}-{args.instrumentation}"
    telemetry = instrument.setup(
        app=args.app,
        instrumentation=args.instrumentation,
        service_name=service_name,
        endpoint=args.endpoint,
        protocol=args.protocol,
        capture=args.capture is not None,
    )
    module = importlib.import_module(f"tests.instrumentation.apps.{APPS[args.app]}")
    if args.corpus:
        chosen = corpus.load(args.corpus)
        ask, questions = module.build(args.llm_base_url, api_key, passages=chosen.passages), chosen.questions
    else:  # an app may ask its own questions
        ask, questions = (
            module.build(args.llm_base_url, api_key),
            getattr(module, "QUESTIONS", corpus.QUESTIONS),
        )
    tracer = trace.get_tracer("brightleaf.handbook")
    expected = []
    for question in questions:
        attributes = {"http.request.method": "POST", "http.route": corpus.ROUTE, "url.path": corpus.ROUTE}
        with tracer.start_as_current_span("POST /ask", kind=SpanKind.SERVER, attributes=attributes) as span:
            answer = ask(question.text)
            span.set_attribute("http.response.status_code", 200)
            trace_id = format(span.get_span_context().trace_id, "032x")
        expected.append(
            {
                "trace_id": trace_id,
                "question": question.text,
                "passages": answer.passages,
                "response": answer.response,
                "grounded": question.grounded,
                "model": corpus.MODEL,
                "service": service_name,
                "route": corpus.ROUTE,
            }
        )
    telemetry.shutdown(args.capture)
    document = json.dumps(expected, indent=1, ensure_ascii=False) + "\n"
    if args.expected:
        args.expected.parent.mkdir(parents=True, exist_ok=True)
        args.expected.write_text(document)
    if args.capture:
        (args.capture / "expected.json").write_text(document)


if __name__ == "__main__":
    main()
