// The AI SDK middleware with the SDK's own mock model (ai/test) against the
// real contextd binary.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { generateText, streamText, wrapLanguageModel, tool, stepCountIs, jsonSchema } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Contextd } from "@contextd/client";
import { contextdMiddleware } from "@contextd/client/ai-sdk";
import { startContextd, downURL } from "./helpers.mjs";
import { mockModel } from "./fakes.mjs";

const promptText = (prompt) => prompt.map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join(""))).join("\n");

let srv, client;
before(async () => {
  srv = await startContextd();
  client = new Contextd({ baseURL: srv.url });
});
after(async () => srv?.stop());

const chatter = [
  "Let us plan the train from Porto to Lisbon.", "Should we pack umbrellas for the coast?", "What time does the museum open?",
  "Remind me to buy sunscreen.", "Which beach is quieter in the morning?", "How far is Sintra by bus?",
  "Can we fit a cooking class in?", "Is the tram crowded at noon?", "Where can we rent bikes?",
  "Book a table for two on Friday.", "What is a good pastry shop nearby?", "Do we need cash for the market?",
  "How long is the walk to the castle?", "Find a quiet cafe to work from.", "Is there a laundry near the flat?",
  "What is the weather on Thursday?", "Can the hotel store our bags?", "Is the river cruise worth it?",
];

test("a 20-turn chat past the budget: an early turn the question needs reaches the model's prompt", async () => {
  const model = mockModel((i) => `Noted (${i}).`);
  const system = "You are a helpful travel agent.";
  // 40 turns, about 500 tokens: past a 250-token budget, so retrieval
  // stands in for the older turns (a chat that fits is sent whole).
  const mw = contextdMiddleware({ client, chatId: "ai-long", userId: "erin", strategy: "rag_augmented", budgetTokens: 250 });
  const wrapped = wrapLanguageModel({ model, middleware: mw });
  const turns = ["My locker code at the gym is 4812, keep it for me.", ...chatter, "Please also note my flight lands at 9am."];
  assert.equal(turns.length, 20);
  for (const t of turns) await generateText({ model: wrapped, system, prompt: t });

  // Every user turn and every reply is stored, in order.
  const stored = (await client.messages("ai-long", { limit: 100 })).messages;
  assert.equal(stored.length, 40);
  assert.deepEqual(stored.slice(0, 2).map((m) => [m.role, m.content]), [["user", turns[0]], ["assistant", "Noted (0)."]]);

  const { text } = await generateText({ model: wrapped, system, prompt: "What is my gym locker code?" });
  assert.equal(text, "Noted (20).");
  const last = model.doGenerateCalls.at(-1).prompt;
  assert.deepEqual(last[0], { role: "system", content: system }, "the caller's system prompt comes first");
  assert.equal(last.at(-1).role, "user");
  assert.match(promptText([last.at(-1)]), /gym locker code/);
  const body = promptText(last);
  if (process.env.SHOW_PROMPT) console.log(JSON.stringify(last, null, 1));
  assert.match(body, /4812/, "the early turn was retrieved into the prompt:\n" + body);
  // It came from retrieval, not from the whole history being sent: the
  // early chatter turns are neither recent nor relevant.
  assert.doesNotMatch(body, /museum open/);
  assert.ok(last.length < 30, `prompt of ${last.length} messages`);
});

test("a chat that fits the budget reaches the model whole, in order", async () => {
  const model = mockModel((i) => `Noted (${i}).`);
  const mw = contextdMiddleware({ client, chatId: "ai-fits", userId: "erin", strategy: "rag_augmented", budgetTokens: 2000 });
  const wrapped = wrapLanguageModel({ model, middleware: mw });
  const turns = ["My locker code at the gym is 4812, keep it for me.", ...chatter.slice(0, 9)];
  for (const t of turns) await generateText({ model: wrapped, prompt: t });
  await generateText({ model: wrapped, prompt: "What is my gym locker code?" });
  const body = promptText(model.doGenerateCalls.at(-1).prompt);
  let at = -1;
  for (const [i, t] of turns.entries()) {
    for (const line of [t, `Noted (${i}).`]) {
      const next = body.indexOf(line, at + 1);
      assert.ok(next > at, `turn "${line}" missing or out of order:\n${body}`);
      at = next;
    }
  }
});

test("a step's text beside a tool call reaches the next step once, after the question", async () => {
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
  const steps = [
    { content: [{ type: "text", text: "Let me check the weather." }, { type: "tool-call", toolCallId: "c1", toolName: "weather", input: '{"city":"Porto"}' }],
      finishReason: { unified: "tool-calls", raw: "tool_calls" } },
    { content: [{ type: "text", text: "It is sunny in Porto." }], finishReason: { unified: "stop", raw: "stop" } },
  ];
  let n = 0;
  const model = new MockLanguageModelV3({ doGenerate: async () => ({ ...steps[n++], usage, warnings: [] }) });
  const wrapped = wrapLanguageModel({ model, middleware: contextdMiddleware({ client, chatId: "ai-steps" }) });
  await generateText({ model: wrapped, prompt: "hello there" }); // an earlier turn: "answer"-less mock replies below
  n = 0;
  const weather = tool({ inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } } }), execute: async () => "sunny in Porto" });
  const { text } = await generateText({ model: wrapped, prompt: "What's the weather in Porto?", tools: { weather }, stopWhen: stepCountIs(3) });
  assert.equal(text, "It is sunny in Porto.");
  const prompt = model.doGenerateCalls.at(-1).prompt;
  const texts = prompt.map((m) => [m.role, typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? `<${p.type}>`).join("")]);
  const question = texts.findIndex(([role, t]) => role === "user" && t.includes("weather in Porto"));
  const checks = texts.map(([, t], i) => (t.includes("Let me check the weather.") ? i : -1)).filter((i) => i >= 0);
  assert.equal(checks.length, 1, "the step's text once:\n" + JSON.stringify(texts, null, 1));
  assert.ok(checks[0] > question, "after the question:\n" + JSON.stringify(texts, null, 1));
  assert.deepEqual(texts.at(-1)[0], "tool");
});

test("streamText: the reply is stored when the stream finishes", async () => {
  const model = mockModel(() => "Casa Amora is booked for May 3 to 7.");
  const wrapped = wrapLanguageModel({ model, middleware: contextdMiddleware({ client, chatId: "ai-stream" }) });
  const res = streamText({ model: wrapped, prompt: "Which hotel did you book?" });
  let text = "";
  for await (const d of res.textStream) text += d;
  assert.equal(text, "Casa Amora is booked for May 3 to 7.");
  const stored = (await client.messages("ai-stream")).messages.map((m) => [m.role, m.content]);
  assert.deepEqual(stored, [["user", "Which hotel did you book?"], ["assistant", "Casa Amora is booked for May 3 to 7."]]);

  // The next call sees the earlier turns from contextd.
  await generateText({ model: wrapped, prompt: "And the dates again?" });
  assert.match(promptText(model.doGenerateCalls.at(-1).prompt), /Casa Amora/);
});

test("contextd down: the model call goes on without memory and onError is told", async () => {
  const down = new Contextd({ baseURL: await downURL() });
  const errors = [];
  const model = mockModel(() => "fine without memory");
  const wrapped = wrapLanguageModel({
    model,
    middleware: contextdMiddleware({ client: down, chatId: "x", onError: (e, stage) => errors.push([e.code, stage]) }),
  });
  const { text } = await generateText({ model: wrapped, system: "sys", prompt: "hello" });
  assert.equal(text, "fine without memory");
  assert.deepEqual(errors, [["unavailable", "context"], ["unavailable", "store"]]);
  const prompt = model.doGenerateCalls[0].prompt;
  assert.deepEqual(prompt.map((m) => m.role), ["system", "user"], "the caller's own prompt, unchanged");

  const strict = wrapLanguageModel({ model, middleware: contextdMiddleware({ client: down, chatId: "x", required: true }) });
  await assert.rejects(generateText({ model: strict, prompt: "hello", maxRetries: 0 }), (e) => {
    const cause = e.name === "ContextdError" ? e : e.cause ?? e.lastError;
    assert.equal(cause?.code ?? e.code, "unavailable", String(e));
    return true;
  });
});

test("the README's AI SDK example runs as written", async () => {
  process.env.CONTEXTD_URL = srv.url;
  const { reply } = await import("../examples/ai-sdk.mjs");
  const model = mockModel((i) => ["I have noted that you are vegetarian.", "A vegetarian place: Ao 26."][i]);
  assert.equal(await reply(model, "readme-ai", "I am vegetarian."), "I have noted that you are vegetarian.");
  assert.equal(await reply(model, "readme-ai", "Where should we eat tonight?"), "A vegetarian place: Ao 26.");
  assert.match(promptText(model.doGenerateCalls[1].prompt), /I am vegetarian/);
  assert.equal((await client.messages("readme-ai")).messages.length, 4);
});
