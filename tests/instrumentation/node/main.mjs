// Run one Node conformance app: `node main.mjs --app A --instrumentation I --llm-base-url URL --corpus FILE`.
//
// It sets up OpenTelemetry with the app's instrumentation, builds the app against the scripted LLM
// server, answers the corpus questions, each inside a root `POST /ask` server span as a web app would,
// and writes what it got (trace id, passages, response) to `--expected` and, with `--capture`, what it
// exported. The corpus file is the Python suite's (tests/instrumentation/node/harness.py writes it from
// tests/instrumentation/apps/corpus.py), so the Node and Python apps ask the same questions.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";

import { SpanKind, trace } from "@opentelemetry/api";

import { APPS } from "./apps.mjs";
import { setup } from "./telemetry.mjs";

const { values: args } = parseArgs({
  options: {
    app: { type: "string" },
    instrumentation: { type: "string" },
    "llm-base-url": { type: "string" },
    corpus: { type: "string" },
    endpoint: { type: "string", default: "http://127.0.0.1:4318" },
    "service-name": { type: "string" },
    expected: { type: "string" },
    capture: { type: "string" },
  },
});

async function main() {
  const app = APPS[args.app];
  if (!app || !app.instrumentations.includes(args.instrumentation) || !args["llm-base-url"] || !args.corpus) {
    const choices = Object.entries(APPS).map(([name, { instrumentations }]) => `${name}: ${instrumentations}`);
    throw new Error(`usage: --app A --instrumentation I --llm-base-url URL --corpus FILE (${choices.join("; ")})`);
  }
  const corpus = JSON.parse(readFileSync(args.corpus, "utf8"));
  const serviceName = args["service-name"] ?? `${args.app}-${args.instrumentation}`;
  const telemetry = setup({
    instrumentation: args.instrumentation,
    serviceName,
    endpoint: args.endpoint,
    capture: Boolean(args.capture),
  });
  const apiKey = process.env.OPENAI_API_KEY ?? "sk-scripted-llm-server";
  const ask = await app.build({ baseURL: args["llm-base-url"], apiKey, corpus });
  const tracer = trace.getTracer("brightleaf.handbook");
  const expected = [];
  for (const question of corpus.questions) {
    const attributes = { "http.request.method": "POST", "http.route": corpus.route, "url.path": corpus.route };
    const { answer, traceId } = await tracer.startActiveSpan(
      "POST /ask",
      { kind: SpanKind.SERVER, attributes },
      async (span) => {
        try {
          const answer = await ask(question.text);
          span.setAttribute("http.response.status_code", 200);
          return { answer, traceId: span.spanContext().traceId };
        } finally {
          span.end();
        }
      },
    );
    expected.push({
      trace_id: traceId,
      question: question.text,
      passages: answer.passages,
      response: answer.response,
      grounded: question.grounded,
      model: corpus.model,
      service: serviceName,
      route: corpus.route,
    });
  }
  await telemetry.shutdown(args.capture);
  const document = `${JSON.stringify(expected, null, 1)}\n`;
  if (args.expected) {
    mkdirSync(dirname(args.expected), { recursive: true });
    writeFileSync(args.expected, document);
  }
  if (args.capture) writeFileSync(join(args.capture, "expected.json"), document);
}

main().catch((error) => {
  console.error(`node app failed: ${error?.stack ?? error}`);
  process.exit(1);
});
