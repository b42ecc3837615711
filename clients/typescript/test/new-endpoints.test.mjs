// The newer endpoints: DELETE one message, GET facts, GET export, search
// min_score and the fact kind.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Agent, Runner } from "@openai/agents";
import { Contextd } from "@contextd/client";
import { ContextdSession } from "@contextd/client/openai-agents";
import { startContextd } from "./helpers.mjs";
import { FakeModel } from "./fakes.mjs";

process.env.OPENAI_AGENTS_DISABLE_TRACING = "1";

let srv, client;
before(async () => {
  srv = await startContextd("supervisor:\n  memory: {summary_recent_turns: 2}\n");
  client = new Contextd({ baseURL: srv.url });
});
after(async () => srv?.stop());

const trip = [
  { id: "n1", role: "user", content: "I am planning a trip to Lisbon in May. I prefer window seats." },
  { id: "n2", role: "assistant", content: "Booked: Casa Amora, May 3-7." },
  { id: "n3", role: "user", content: "My passport number is X1234567." },
  { id: "n4", role: "assistant", content: "Noted." },
];

test("deleteMessage leaves a tombstone and the content is gone", async () => {
  await client.append("nx-del", trip, { userId: "gina" });
  await client.deleteMessage("nx-del", "n3");
  const msgs = (await client.messages("nx-del")).messages;
  const tomb = msgs.find((m) => m.id === "n3");
  assert.equal(tomb.deleted, true);
  assert.ok(!tomb.content, "no content on a tombstone");
  const ctx = await client.context("nx-del", { query: "passport" });
  assert.doesNotMatch(ctx.context, /X1234567/);
  await assert.rejects(client.deleteMessage("nx-del", "no-such-id"), { status: 404, code: "not_found" });
});

test("ContextdSession.popItem removes and returns the newest item", async () => {
  const model = new FakeModel((i) => `reply ${i}`);
  const agent = new Agent({ name: "a", instructions: "i", model });
  const session = new ContextdSession({ client, chatId: "nx-pop" });
  const runner = new Runner({ tracingDisabled: true });
  await runner.run(agent, "first", { session });
  await runner.run(agent, "second", { session });
  const popped = await session.popItem();
  assert.deepEqual(popped.content, [{ type: "output_text", text: "reply 1" }]);
  const items = await session.getItems();
  assert.equal(items.length, 3);
  assert.equal(items.at(-1).content, "second");
  assert.equal((await session.popItem()).content, "second");
  assert.equal((await session.getItems()).length, 2);
});

test("facts pages the chat's facts", async () => {
  await client.append("nx-facts", trip, { userId: "hank" });
  await client.refreshSummary("nx-facts");
  let page;
  for (let i = 0; i < 100; i++, await new Promise((r) => setTimeout(r, 50))) {
    page = await client.facts("nx-facts", { limit: 50 });
    if (page.facts.length > 0) break;
  }
  assert.ok(page.facts.length > 0, "facts are drawn from the chat");
  for (const f of page.facts) {
    assert.equal(f.chat_id, "nx-facts");
    assert.ok(f.text && Array.isArray(f.seqs) && f.seqs.length > 0);
  }
  const all = await client.facts("nx-facts", { includeSuperseded: true });
  assert.ok(all.facts.length >= page.facts.length);
  await assert.rejects(client.facts("nx-unknown"), { status: 404 });
  const hits = await client.search("Lisbon window seats", { chatId: "nx-facts", kinds: ["fact"] });
  assert.ok(hits.every((h) => h.kind === "fact" && h.fact_id));
});

test("search minScore leaves weaker hits out", async () => {
  await client.append("nx-score", trip);
  const all = await client.search("Casa Amora hotel", { chatId: "nx-score", kinds: ["turn"] });
  assert.ok(all.length > 0);
  // minScore bounds the dense similarity (score is the fused rank score);
  // lexical matches stay, so a strict search finds no more, and nonsense none.
  const strict = await client.search("Casa Amora hotel", { chatId: "nx-score", kinds: ["turn"], minScore: 0.99 });
  assert.ok(strict.length <= all.length);
  const none = await client.search("xylophone quantum zebra", { chatId: "nx-score", kinds: ["turn"], minScore: 0.99 });
  assert.equal(none.length, 0);
});

test("exportChat and exportUser give the dump format", async () => {
  await client.append("nx-exp1", trip, { userId: "ivy" });
  await client.append("nx-exp2", trip.slice(0, 2), { userId: "ivy" });
  const chat = await client.exportChat("nx-exp1");
  assert.equal(chat[0].type, "chat");
  assert.equal(chat.filter((r) => r.type === "message").length, 4);
  assert.ok(chat.every((r) => r.tenant === "default"));
  const user = await client.exportUser("ivy");
  const chats = user.filter((r) => r.type === "chat").map((r) => r.id ?? r.chat_id).sort();
  assert.deepEqual(chats, ["nx-exp1", "nx-exp2"]);
  assert.equal(user.filter((r) => r.type === "message").length, 6);
});
