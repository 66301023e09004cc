// The Node RAG apps, written the way the libraries' docs write them. Each `build` returns
// `ask(question) -> {passages: [{id, text, score}], response}`; the passages are what the app put in
// front of the model (the top two of the corpus by cosine over the scripted LLM server's embeddings).

import { createOpenAI } from "@ai-sdk/openai";
import { cosineSimilarity, embed, embedMany, generateText, isStepCount, tool } from "ai";
import OpenAI from "openai";
import { z } from "zod";

const TOP_K = 2;

// The Python `openai` app's system prompt (tests/instrumentation/apps/openai_sdk.py): instructions,
// a blank line, the passages separated by blank lines.
const SYSTEM =
  "You answer questions about the Brightleaf employee handbook. Answer only from these passages; " +
  "if they do not contain the answer, say you don't know.\n\n";
// The common `Context:` header shape (issue 46 measured it with OpenInference on the openai JS SDK).
const CONTEXT_SYSTEM =
  "You answer questions about the Brightleaf employee handbook using only the context below. " +
  "If it does not contain the answer, say you don't know.\n\nContext:\n";
const TOOL_SYSTEM =
  "You answer questions about the Brightleaf employee handbook. Search the handbook first, then " +
  "answer only from what the search returns; if it does not contain the answer, say you don't know.";

const asPassages = (top) => top.map((p) => ({ id: p.id, text: p.text, score: null }));

function cosine(a, b) {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / (Math.sqrt(na) * Math.sqrt(nb) || 1);
}

/** The AI SDK retriever: the corpus embedded once with `embedMany`, each question with `embed`. */
async function aiSdkRetriever(provider, corpus) {
  const model = provider.embedding(corpus.embeddingModel);
  const texts = corpus.passages.map((p) => p.text);
  const { embeddings } = await embedMany({ model, values: texts });
  return async (question) => {
    const { embedding } = await embed({ model, value: question });
    const ranked = corpus.passages
      .map((passage, i) => ({ passage, similarity: cosineSimilarity(embedding, embeddings[i]) }))
      .sort((a, b) => b.similarity - a.similarity);
    return ranked.slice(0, TOP_K).map((r) => r.passage);
  };
}

/** Vercel AI SDK, no tool: the passages in the system prompt, telemetry on. */
async function vercelAi({ baseURL, apiKey, corpus }) {
  const provider = createOpenAI({ baseURL, apiKey });
  const top = await aiSdkRetriever(provider, corpus);
  return async (question) => {
    const passages = await top(question);
    const { text } = await generateText({
      model: provider.chat(corpus.model),
      temperature: 0,
      system: SYSTEM + passages.map((p) => p.text).join("\n\n"),
      prompt: question,
      // The name apps written for AI SDK 4-6 pass; AI SDK 7 still honours it (alias of `telemetry`).
      experimental_telemetry: { isEnabled: true, functionId: "handbook-answer" },
    });
    return { passages: asPassages(passages), response: text };
  };
}

/** Vercel AI SDK with a retrieval tool: the model calls `search`, then answers from its result. */
async function vercelAiTool({ baseURL, apiKey, corpus }) {
  const provider = createOpenAI({ baseURL, apiKey });
  const top = await aiSdkRetriever(provider, corpus);
  return async (question) => {
    let found = [];
    const search = tool({
      description: "Search the Brightleaf employee handbook; returns the most relevant passages.",
      inputSchema: z.object({ query: z.string().describe("what to look for") }),
      execute: async ({ query }) => {
        found = await top(query);
        return found.map((p) => ({ id: p.id, text: p.text }));
      },
    });
    const { text } = await generateText({
      model: provider.chat(corpus.model),
      temperature: 0,
      system: TOOL_SYSTEM,
      prompt: question,
      tools: { search },
      stopWhen: isStepCount(2), // call the tool, then answer from its result
      experimental_telemetry: { isEnabled: true, functionId: "handbook-answer" },
    });
    return { passages: asPassages(found), response: text };
  };
}

/** The openai JS SDK alone: embeddings ranking, the passages under `Context:` in the system message. */
async function openaiSdk({ baseURL, apiKey, corpus }) {
  const client = new OpenAI({ baseURL, apiKey });
  const texts = corpus.passages.map((p) => p.text);
  const vectors = (await client.embeddings.create({ model: corpus.embeddingModel, input: texts })).data.map(
    (d) => d.embedding,
  );
  return async (question) => {
    const query = (await client.embeddings.create({ model: corpus.embeddingModel, input: question })).data[0]
      .embedding;
    const passages = corpus.passages
      .map((passage, i) => ({ passage, similarity: cosine(query, vectors[i]) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, TOP_K)
      .map((r) => r.passage);
    const completion = await client.chat.completions.create({
      model: corpus.model,
      temperature: 0,
      messages: [
        { role: "system", content: CONTEXT_SYSTEM + passages.map((p) => p.text).join("\n\n") },
        { role: "user", content: question },
      ],
    });
    return { passages: asPassages(passages), response: completion.choices[0].message.content ?? "" };
  };
}

// app name -> (builder, the instrumentations it runs with: telemetry.mjs)
export const APPS = {
  "vercel-ai": { build: vercelAi, instrumentations: ["ai-sdk", "ai-sdk-genai"] },
  "vercel-ai-tool": { build: vercelAiTool, instrumentations: ["ai-sdk", "ai-sdk-genai"] },
  "openai-js": { build: openaiSdk, instrumentations: ["openinference"] },
};
