// The client against the real contextd binary, and its failure handling
// against servers that refuse, stall or overload.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { Contextd, ContextdError } from "@contextd/client";
import { startContextd, downURL } from "./helpers.mjs";

let srv, keyed, c;
before(async () => {
  [srv, keyed] = await Promise.all([
    // Two recent turns: a refresh has older turns to summarise.
    startContextd("supervisor:\n  memory: {summary_recent_turns: 2}\n"),
    startContextd("server:\n  auth:\n    api_keys:\n      - {key: ts-secret-key-0001, tenant: t1}\n"),
  ]);
  c = new Contextd({ baseURL: srv.url });
});
after(async () => Promise.all([srv?.stop(), keyed?.stop()]));

const trip = [
  { role: "user", content: "I am planning a trip to Lisbon in May. I prefer window seats." },
  { role: "assistant", content: "Booked: Casa Amora, May 3-7." },
  { role: "user", content: "Add a day trip to Sintra on May 5." },
];

test("append is idempotent by id and messages pages in seq order", async () => {
  const msgs = trip.map((m, i) => ({ ...m, id: `m${i + 1}` }));
  const a = await c.append("c-append", msgs, { userId: "alice", agent: "default" });
  assert.equal(a.appended, 3);
  assert.deepEqual(a.messages.map((m) => m.seq), [1, 2, 3]);
  const again = await c.append("c-append", msgs);
  assert.equal(again.duplicates, 3);
  const p1 = await c.messages("c-append", { limit: 2 });
  assert.deepEqual(p1.messages.map((m) => m.id), ["m1", "m2"]);
  const p2 = await c.messages("c-append", { afterSeq: p1.next_after_seq });
  assert.deepEqual(p2.messages.map((m) => m.content), [trip[2].content]);
  // Messages without an id get one, so each is stored once.
  const gen = await c.append("c-append", [{ role: "user", content: "no id" }]);
  assert.equal(gen.appended, 1);
  assert.match(gen.messages[0].id, /^[0-9a-f-]{36}$/);
});

test("context assembles within the budget and include trims the answer", async () => {
  await c.append("c-ctx", trip, { userId: "bob" });
  const res = await c.context("c-ctx", { query: "Which hotel?", budgetTokens: 300, strategy: "rag_augmented" });
  assert.match(res.context, /Casa Amora/);
  assert.ok(res.usage.total_tokens <= 300);
  assert.equal(res.usage.budget_tokens, 300);
  assert.equal(typeof res.usage.summarised_turns, "number"); // the server's spelling, as types.ts has it
  assert.deepEqual(res.degraded, []);
  assert.equal(res.strategy, "rag_augmented");
  const only = await c.context("c-ctx", { include: ["messages"], append: [{ role: "user", content: "And the dates?" }] });
  assert.equal(only.context, undefined);
  assert.ok(only.messages.some((m) => m.content.includes("Sintra")));
  const msgs = await c.contextMessages("c-ctx", { query: "Sintra" });
  assert.ok(msgs.length > 0 && msgs.every((m) => typeof m.role === "string"));
  assert.equal((await c.messages("c-ctx")).messages.length, 4, "append on context stores the turn");
});

test("search honours kinds", async () => {
  await c.append("c-search", trip);
  const hits = await c.search("Sintra day trip", { chatId: "c-search", k: 5, kinds: ["turn"] });
  assert.ok(hits.length > 0);
  assert.ok(hits.every((h) => h.kind === "turn" && h.chat_id === "c-search"));
  assert.match(hits[0].content, /Sintra/);
  assert.deepEqual(hits.degraded, [], "the search waited for the append's turns");
  assert.equal(JSON.stringify(hits), JSON.stringify([...hits]), "degraded stays out of the hits' JSON");
  const eps = await c.search("Sintra", { chatId: "c-search", kinds: ["episode"] });
  assert.ok(eps.every((h) => h.kind === "episode"));
});

test("summary, refresh, episodes, profile and forgetting a profile item", async () => {
  await c.append("c-sum", trip, { userId: "carol" });
  const before = await c.summary("c-sum");
  assert.equal(before.summary, null);
  assert.equal(before.preview, false);
  const refreshed = await c.refreshSummary("c-sum");
  assert.ok(refreshed === null || refreshed.summary, "200 with the summary, or 202: " + JSON.stringify(refreshed));
  const after = await c.summary("c-sum");
  assert.ok(after.summary && after.summary.covered_to_seq >= 1);
  assert.ok(Array.isArray(after.chain) && Array.isArray(after.episodes));
  const eps = await c.episodes("c-sum", { limit: 10 });
  assert.ok(Array.isArray(eps.episodes) && typeof eps.next_after_seq === "number");
  // The profile is merged in the background after the summary.
  let item, profile;
  for (let i = 0; i < 200 && !item; i++, await new Promise((r) => setTimeout(r, 50))) {
    const res = await c.profile("carol");
    assert.equal(res.user_id, "carol");
    profile = res.profile;
    item = profile.user_preferences.find((p) => /window seats/.test(p.text));
  }
  assert.ok(item, "the preference is in the profile: " + JSON.stringify(profile));
  await c.forgetProfileItem("carol", item.id);
  const again = await c.profile("carol");
  assert.ok(!again.profile.user_preferences.some((p) => p.id === item.id));
  await assert.rejects(c.forgetProfileItem("carol", "no-such-item"), { name: "ContextdError", status: 404, code: "not_found" });
});

test("deleteChat and deleteUser erase", async () => {
  await c.append("c-del", trip, { userId: "dave" });
  await c.append("c-del2", trip, { userId: "dave" });
  await c.deleteChat("c-del");
  await assert.rejects(c.messages("c-del"), { status: 404, code: "not_found" });
  await c.deleteUser("dave");
  await assert.rejects(c.messages("c-del2"), { status: 404 });
  await assert.rejects(c.profile("dave"), { status: 404 });
});

test("API errors are ContextdError with status, code and field", async () => {
  const err = await c.context("c-ctx", { budgetTokens: 0 }).catch((e) => e);
  assert.ok(err instanceof ContextdError);
  assert.equal(err.status, 400);
  assert.equal(err.code, "invalid_value");
  assert.equal(err.field, "budget_tokens");
  assert.ok(err.message.length > 0);
  await assert.rejects(c.append("c-bad", [{ role: "robot", content: "x" }]), { status: 400, code: "invalid_role", field: "messages[0].role" });
  await assert.rejects(c.context("no-such-chat"), { status: 404, code: "not_found" });
  await assert.rejects(c.search("x", { kinds: ["summary"] }), { status: 400, field: "kinds" });
});

test("auth: the key is sent, a missing one is a 401", async () => {
  const good = new Contextd({ baseURL: keyed.url, apiKey: "ts-secret-key-0001" });
  assert.equal((await good.append("k1", trip)).appended, 3);
  const none = new Contextd({ baseURL: keyed.url });
  await assert.rejects(none.messages("k1"), { status: 401, code: "unauthorized" });
  await assert.rejects(new Contextd({ baseURL: keyed.url, apiKey: "wrong-key-000000" }).messages("k1"), { status: 401 });
});

test("a refused connection is ContextdError unavailable", async () => {
  const down = new Contextd({ baseURL: await downURL() });
  const err = await down.context("x").catch((e) => e);
  assert.ok(err instanceof ContextdError, String(err));
  assert.equal(err.status, 0);
  assert.equal(err.code, "unavailable");
  assert.match(err.message, /unreachable/);
});

// A server that accepts connections and never answers.
async function stallingServer() {
  const s = http.createServer(() => {});
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  return s;
}

test("a timeout is ContextdError unavailable; the caller's abort is aborted", async () => {
  const s = await stallingServer();
  try {
    const cl = new Contextd({ baseURL: `http://127.0.0.1:${s.address().port}` });
    await assert.rejects(cl.messages("x", { timeoutMs: 200 }), { name: "ContextdError", status: 0, code: "unavailable" });
    const ctl = new AbortController();
    const p = cl.messages("x", { signal: ctl.signal });
    ctl.abort();
    await assert.rejects(p, { name: "ContextdError", code: "aborted" });
  } finally {
    s.closeAllConnections();
    s.close();
  }
});

test("429 and 503 are retried after Retry-After; the last failure is thrown", async () => {
  const seen = [];
  const answers = [
    [503, { "Retry-After": "1" }, { error: { code: "backend_unavailable", message: "down" } }],
    [429, { "Retry-After": "0" }, { error: { code: "rate_limited", message: "slow down" } }],
    [200, {}, { messages: [], next_after_seq: 0 }],
  ];
  const fake = async (url, init) => {
    seen.push({ at: Date.now(), method: init.method, auth: init.headers.Authorization });
    const [status, headers, body] = answers[Math.min(seen.length - 1, answers.length - 1)];
    return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
  };
  const cl = new Contextd({ baseURL: "http://contextd.test", apiKey: "k", fetch: fake });
  const page = await cl.messages("x");
  assert.deepEqual(page.messages, []);
  assert.equal(seen.length, 3);
  assert.ok(seen[1].at - seen[0].at >= 950, `waited ${seen[1].at - seen[0].at} ms, Retry-After said 1 s`);
  assert.equal(seen[0].auth, "Bearer k");

  let calls = 0;
  const always503 = async () => {
    calls++;
    return new Response(JSON.stringify({ error: { code: "backend_unavailable", message: "down" } }), { status: 503, headers: { "Retry-After": "0" } });
  };
  const give = new Contextd({ baseURL: "http://contextd.test", fetch: always503, retries: 2 });
  await assert.rejects(give.messages("x"), { status: 503, code: "backend_unavailable" });
  assert.equal(calls, 3, "the first try and two retries");
});

test("a retried append after a lost answer sends the same ids", async () => {
  const sent = [];
  const lost = async (url, init) => {
    sent.push(JSON.parse(init.body));
    throw new TypeError("fetch failed"); // the answer never came
  };
  const cl = new Contextd({ baseURL: "http://contextd.test", fetch: lost });
  const msgs = [{ role: "user", content: "book the hotel please" }];
  for (let i = 0; i < 2; i++) await assert.rejects(cl.append("r", msgs), { code: "unavailable" });
  assert.equal(sent.length, 2);
  assert.ok(sent[0].messages[0].id && sent[0].messages[0].id === sent[1].messages[0].id, JSON.stringify(sent));
  assert.equal(msgs[0].id, sent[0].messages[0].id);
});

test("a Retry-After longer than the time left throws the server's error at once", async () => {
  let calls = 0;
  const limited = async () => {
    calls++;
    return new Response(JSON.stringify({ error: { code: "rate_limited", message: "slow down" } }), { status: 429, headers: { "Retry-After": "10" } });
  };
  const cl = new Contextd({ baseURL: "http://contextd.test", fetch: limited });
  const t0 = Date.now();
  await assert.rejects(cl.append("x", [{ role: "user", content: "hi" }], { timeoutMs: 2000 }), { name: "ContextdError", status: 429, code: "rate_limited" });
  assert.ok(Date.now() - t0 < 1000, `took ${Date.now() - t0} ms: it waited for a retry that could not fit`);
  assert.equal(calls, 1);
});

// A server that sends the head of a 200 and part of its body, then stalls
// (or, with reset, drops the connection).
async function halfAnswer({ reset = false } = {}) {
  const s = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "1000" });
    res.write('{"messages": [');
    if (reset) setTimeout(() => res.socket.destroy(), 50);
  });
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  return s;
}

test("a failure while the body arrives is a ContextdError too", async () => {
  const s = await halfAnswer();
  const r = await halfAnswer({ reset: true });
  try {
    const cl = new Contextd({ baseURL: `http://127.0.0.1:${s.address().port}` });
    await assert.rejects(cl.messages("x", { timeoutMs: 300 }), { name: "ContextdError", status: 0, code: "unavailable" });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 100);
    await assert.rejects(cl.exportUser("u", { signal: ctl.signal }), { name: "ContextdError", code: "aborted" });
    const cr = new Contextd({ baseURL: `http://127.0.0.1:${r.address().port}` });
    await assert.rejects(cr.messages("x"), { name: "ContextdError", status: 0, code: "unavailable" });
  } finally {
    for (const x of [s, r]) {
      x.closeAllConnections();
      x.close();
    }
  }
});

test("a 200 that is not contextd's JSON is ContextdError invalid_response", async () => {
  const page = async () => new Response("<html>please log in</html>", { status: 200, headers: { "Content-Type": "text/html" } });
  const cl = new Contextd({ baseURL: "http://x.test", fetch: page });
  await assert.rejects(cl.messages("x"), { name: "ContextdError", status: 200, code: "invalid_response" });
  await assert.rejects(cl.ready(), { name: "ContextdError", code: "invalid_response" });
  await assert.rejects(cl.exportChat("x"), { name: "ContextdError", code: "invalid_response" });
});

test("a non-JSON error answer is still a ContextdError", async () => {
  const html = async () => new Response("<html>bad gateway</html>", { status: 502 });
  await assert.rejects(new Contextd({ baseURL: "http://x.test", fetch: html }).messages("x"), { status: 502, code: "http_error" });
});

test("search carries the answer's degraded reasons on its hits", async () => {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ hits: [{ kind: "turn", chat_id: "c", seq: 1, role: "user", content: "x", score: 1, created_at: "2026-01-01T00:00:00Z" }], degraded: ["index_behind"] }));
    });
  });
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  try {
    const hits = await new Contextd({ baseURL: `http://127.0.0.1:${s.address().port}` }).search("x");
    assert.equal(hits.length, 1);
    assert.deepEqual(hits.degraded, ["index_behind"]);
  } finally {
    s.close();
  }
});
