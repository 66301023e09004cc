// OpenTelemetry setup of the Node conformance apps, as the instrumentations' docs write it: the
// NodeSDK with the stock OTLP/HTTP trace exporter, and exactly one instrumentation switched on.
// `--capture` adds an in-memory exporter whose spans are encoded with the OTLP exporter's own JSON
// serializer: traces.json is the body the HTTP exporter would send (hex ids, integer enums), the
// fixture ragpulse's extraction is unit-tested against (tests/instrumentation/test_node_captured.py).

import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

import { LegacyOpenTelemetry, OpenTelemetry } from "@ai-sdk/otel";
import { OpenAIInstrumentation } from "@arizeai/openinference-instrumentation-openai";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import OpenAI from "openai";
import { registerTelemetry } from "ai";

export const INSTRUMENTATIONS = ["ai-sdk", "ai-sdk-genai", "openinference"];

/**
 * Start the SDK. `ai-sdk`: the AI SDK's OpenTelemetry integration with its own `ai.*` attributes
 * (`LegacyOpenTelemetry` of @ai-sdk/otel: what `experimental_telemetry` wrote before AI SDK 7, where
 * the integration moved out of `ai`). `ai-sdk-genai`: the integration AI SDK 7 documents,
 * `OpenTelemetry` of @ai-sdk/otel, with the GenAI conventions (`invoke_agent`, `chat`, `execute_tool`
 * spans). `openinference`: OpenInference's instrumentation of the openai SDK, instrumented by hand as
 * its docs say for ES modules.
 */
export function setup({ instrumentation, serviceName, endpoint, capture }) {
  const spanProcessors = [];
  if (endpoint !== "none") {
    const url = `${endpoint.replace(/\/$/, "")}/v1/traces`;
    spanProcessors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) }));
  }
  const captured = capture ? new InMemorySpanExporter() : null;
  const capturing = captured ? new SimpleSpanProcessor({ exporter: captured }) : null;
  if (capturing) spanProcessors.push(capturing);
  const instrumentations = [];
  if (instrumentation === "openinference") {
    const openinference = new OpenAIInstrumentation();
    openinference.manuallyInstrument(OpenAI);
    instrumentations.push(openinference);
  } else if (!INSTRUMENTATIONS.includes(instrumentation)) {
    throw new Error(`unknown instrumentation ${instrumentation}`);
  }
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    autoDetectResources: false, // no host id, pid or paths in the committed captures
    spanProcessors,
    instrumentations,
  });
  sdk.start();
  // After start: the integration takes its tracer when constructed, through its own copy of
  // @opentelemetry/api, which sees the SDK's provider only once the SDK has registered it.
  if (instrumentation === "ai-sdk") registerTelemetry(new LegacyOpenTelemetry());
  if (instrumentation === "ai-sdk-genai") registerTelemetry(new OpenTelemetry());
  return {
    async shutdown(captureDir) {
      if (captured && captureDir) { // before shutdown, which empties the in-memory exporter
        await capturing.forceFlush();
        mkdirSync(captureDir, { recursive: true });
        const body = JsonTraceSerializer.serializeRequest(captured.getFinishedSpans());
        const document = JSON.parse(new TextDecoder().decode(body));
        writeFileSync(join(captureDir, "traces.json"), `${JSON.stringify(document, null, 1)}\n`);
        writeFileSync(join(captureDir, "logs.json"), "{}\n"); // neither instrumentation logs
      }
      await sdk.shutdown(); // flushes the batch processor: every span is sent before the app exits
    },
  };
}
