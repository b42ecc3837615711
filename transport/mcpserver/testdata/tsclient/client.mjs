// A real MCP client nobody here wrote: the official TypeScript SDK over
// streamable HTTP with a bearer key. Usage: node client.mjs URL KEY.
// Prints one line per check and exits non-zero on the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL " + msg); process.exit(1); };
const ok = (msg) => console.log("ok " + msg);
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const transport = new StreamableHTTPClientTransport(new URL(url + "/mcp"), {
  requestInit: { headers: { Authorization: "Bearer " + key } },
});
const client = new Client({ name: "ts-sdk-test", version: "0.0.0" });
await client.connect(transport);
ok("connected");

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
for (const want of ["add_messages", "delete_chat", "get_context", "get_summary", "get_user_profile", "search_memory"]) {
  if (!names.includes(want)) fail("tool " + want + " missing: " + names);
}
const del = tools.find((t) => t.name === "delete_chat");
if (!del.annotations || del.annotations.destructiveHint !== true) fail("delete_chat is not annotated destructive");
ok("tools " + names.join(","));

const turns = [
  { id: "t1", role: "user", content: "I am planning a trip to Lisbon in May. I am vegetarian." },
  { id: "t2", role: "assistant", name: "Travel Agent", content: "Booked: Casa Amora, May 3-7." },
];
let r = await client.callTool({ name: "add_messages", arguments: { chat_id: "ts", user_id: "alice", messages: turns } });
if (r.isError || r.structuredContent.appended !== 2) fail("add_messages: " + text(r));
ok("add_messages");

r = await client.callTool({ name: "get_context", arguments: { chat_id: "ts", query: "Which hotel?", budget_tokens: 400 } });
if (r.isError || !text(r).includes("Casa Amora") || r.structuredContent.usage.total_tokens > 400) fail("get_context: " + text(r));
ok("get_context");

r = await client.callTool({ name: "get_summary", arguments: { chat_id: "ts" } });
if (r.isError) fail("get_summary: " + text(r));
ok("get_summary");

r = await client.callTool({ name: "get_user_profile", arguments: { user_id: "alice" } });
if (r.isError || r.structuredContent.user_id !== "alice") fail("get_user_profile: " + text(r));
ok("get_user_profile");

r = await client.callTool({ name: "search_memory", arguments: { query: "Lisbon", chat_id: "ts" } });
if (r.isError && JSON.parse(text(r)).error.code !== "backend_unavailable") fail("search_memory: " + text(r));
ok("search_memory");

r = await client.callTool({ name: "get_context", arguments: { chat_id: "ts", budget_tokens: 0 } });
if (!r.isError) fail("budget 0 must be a tool error");
const e = JSON.parse(text(r)).error;
if (e.code !== "invalid_value" || e.field !== "budget_tokens") fail("error " + JSON.stringify(e));
ok("error case " + e.code + " " + e.field);

r = await client.callTool({ name: "delete_chat", arguments: { chat_id: "ts" } });
if (r.isError) fail("delete_chat: " + text(r));
r = await client.callTool({ name: "get_context", arguments: { chat_id: "ts" } });
if (!r.isError || JSON.parse(text(r)).error.code !== "not_found") fail("chat survived delete_chat");
ok("delete_chat");

await client.close();
console.log("ALL OK");
