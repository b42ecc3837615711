// ContextdSession run by the OpenAI Agents SDK's own Runner, with a fake
// Model, against the real contextd binary.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Agent, Runner } from "@openai/agents";
import { Contextd, ContextdError } from "@contextd/client";
import { ContextdSession } from "@contextd/client/openai-agents";
import { startContextd, downURL } from "./helpers.mjs";
import { FakeModel } from "./fakes.mjs";

process.env.OPENAI_AGENTS_DISABLE_TRACING = "1";

const inputText = (input) =>
  (typeof input === "string" ? input : input.map((it) => (typeof it.content === "string" ? it.content : (it.content ?? []).map((p) => p.text ?? "").join(""))).join("\n"));

let srv, client;
before(async () => {
  srv = await startContextd();
  client = new Contextd({ baseURL: srv.url });
});
after(async () => srv?.stop());

test("two turns through the Runner: history comes back from contextd", async () => {
  const model = new FakeModel((i) => ["Noted: you are vegetarian.", "Try Ao 26, a vegetarian place."][i]);
  const agent = new Agent({ name: "Travel agent", instructions: "You help plan trips.", model });
  const session = new ContextdSession({ client, chatId: "agents-1", userId: "frank", agent: "default" });
  const runner = new Runner({ tracingDisabled: true });
  assert.equal(await session.getSessionId(), "agents-1");

  const r1 = await runner.run(agent, "I am vegetarian.", { session });
  assert.equal(r1.finalOutput, "Noted: you are vegetarian.");
  const r2 = await runner.run(agent, "Where should we eat?", { session });
  assert.equal(r2.finalOutput, "Try Ao 26, a vegetarian place.");
  // The second model call got the first turn from the session.
  assert.match(inputText(model.requests[1].input), /I am vegetarian[\s\S]*Noted: you are vegetarian[\s\S]*Where should we eat/);

  // contextd holds the four turns as readable text, for its summaries and retrieval.
  const stored = (await client.messages("agents-1")).messages.map((m) => [m.role, m.content]);
  assert.deepEqual(stored, [
    ["user", "I am vegetarian."], ["assistant", "Noted: you are vegetarian."],
    ["user", "Where should we eat?"], ["assistant", "Try Ao 26, a vegetarian place."],
  ]);
  const ctx = await client.context("agents-1", { query: "vegetarian" });
  assert.match(ctx.context, /vegetarian/);

  // getItems gives the Runner back its own items, newest `limit` last.
  const items = await session.getItems();
  assert.equal(items.length, 4);
  assert.deepEqual(items[1].content, [{ type: "output_text", text: "Noted: you are vegetarian." }]);
  const two = await session.getItems(2);
  assert.deepEqual(two, items.slice(2));
  assert.deepEqual(await session.getItems(0), []);

  await session.clearSession();
  assert.deepEqual(await session.getItems(), []);
  await assert.rejects(client.messages("agents-1"), { status: 404 });
  await session.clearSession(); // clearing an empty session is fine
});

test("tool items are stored as text with the item kept for the Runner", async () => {
  const session = new ContextdSession({ client, chatId: "agents-tools" });
  const call = { type: "function_call", callId: "c1", name: "get_weather", arguments: '{"city":"Lisbon"}', status: "completed" };
  const result = { type: "function_call_result", callId: "c1", name: "get_weather", status: "completed", output: { type: "text", text: "sunny, 24C" } };
  const reasoning = { type: "reasoning", content: [] };
  await session.addItems([call, result, reasoning]);
  const stored = (await client.messages("agents-tools")).messages.map((m) => [m.role, m.content]);
  assert.deepEqual(stored, [["assistant", 'called get_weather({"city":"Lisbon"})'], ["tool", "sunny, 24C"], ["assistant", "[reasoning]"]]);
  assert.deepEqual(await session.getItems(), [call, result, reasoning]);
  // A turn stored by another client comes back as a plain message.
  await client.append("agents-tools", [{ role: "user", content: "from elsewhere" }]);
  assert.deepEqual((await session.getItems(1))[0], { role: "user", content: "from elsewhere" });
});

test("a tool output past the server's per-message and body limits is stored, not the run's end", async () => {
  const session = new ContextdSession({ client, chatId: "agents-big", userId: "zoe" });
  const big = "log line\n".repeat(35000); // 315 KB: over max_message_bytes (256 KiB)
  const huge = "x".repeat(5 << 20); // 5 MiB: over the 4 MiB body limit on its own
  const items = [
    { role: "user", content: "Summarise big.log" },
    { type: "function_call", callId: "c1", name: "read_file", arguments: '{"path":"big.log"}', status: "completed" },
    { type: "function_call_result", callId: "c1", name: "read_file", status: "completed", output: big },
    { type: "function_call_result", callId: "c2", name: "read_file", status: "completed", output: huge },
    { role: "assistant", status: "completed", content: [{ type: "output_text", text: "It is a log." }] },
  ];
  await session.addItems(items);
  const back = await session.getItems();
  assert.equal(back.length, items.length);
  assert.deepEqual(back.slice(0, 3), items.slice(0, 3), "the 315 KB item comes back whole");
  assert.deepEqual(back[4], items[4]);
  assert.ok(back[3].output.length < items[3].output.length && back[3].output.endsWith("too large to store]"), "the 5 MiB item is kept, cut");
  const stored = (await client.messages("agents-big", { limit: 10 })).messages;
  assert.ok(stored[2].content.length <= 256 << 10, `content of ${stored[2].content.length} bytes`);

  // More items than one append may carry.
  const many = Array.from({ length: 1200 }, (_, i) => ({ role: "user", content: `note ${i}` }));
  const s2 = new ContextdSession({ client, chatId: "agents-many" });
  await s2.addItems(many);
  assert.deepEqual(await s2.getItems(), many);
});

test("an unknown chat is an empty session", async () => {
  const session = new ContextdSession({ client, chatId: "agents-none" });
  assert.deepEqual(await session.getItems(), []);
  assert.equal(await session.popItem(), undefined);
});

test("contextd down: every session method throws ContextdError unavailable, and so does the run", async () => {
  const session = new ContextdSession({ client: new Contextd({ baseURL: await downURL() }), chatId: "x" });
  for (const call of [() => session.getItems(), () => session.addItems([{ role: "user", content: "x" }]), () => session.popItem(), () => session.clearSession()]) {
    await assert.rejects(call(), (e) => e instanceof ContextdError && e.code === "unavailable");
  }
  const agent = new Agent({ name: "a", instructions: "i", model: new FakeModel() });
  await assert.rejects(new Runner({ tracingDisabled: true }).run(agent, "hello", { session }), (e) => {
    let c = e;
    while (c && !(c instanceof ContextdError)) c = c.cause;
    assert.ok(c, "the run's error carries the ContextdError: " + e);
    assert.equal(c.code, "unavailable");
    return true;
  });
});

test("the README's OpenAI Agents example runs as written", async () => {
  process.env.CONTEXTD_URL = srv.url;
  const { ask } = await import("../examples/openai-agents.mjs");
  const model = new FakeModel((i) => ["Lisbon in May is lovely.", "You said Lisbon, in May."][i]);
  assert.equal(await ask(model, "readme-agents", "I want to go to Lisbon in May."), "Lisbon in May is lovely.");
  assert.equal(await ask(model, "readme-agents", "Where did I want to go?"), "You said Lisbon, in May.");
  assert.match(inputText(model.requests[1].input), /Lisbon in May/);
});
