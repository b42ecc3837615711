// @contextd/client/openai-agents: a contextd chat as the OpenAI Agents
// SDK's Session (package `@openai/agents`). Only types are imported from
// it: the package has no runtime dependency.
import type { AgentInputItem, Session } from "@openai/agents";
import { ContextdError, type Contextd } from "./index.js";
import type { InputMessage, LiveMessage, Role } from "./types.js";

export interface ContextdSessionOptions {
  client: Contextd;
  chatId: string;
  userId?: string;
  agent?: string;
  /**
   * The server's `server.max_message_bytes` (default 256 KiB). An item
   * whose text is longer (a tool's big output) is stored with its text cut
   * to this in the turn's content; the item itself is kept whole in the
   * turn's metadata, so the Runner gets it back whole.
   */
  maxMessageBytes?: number;
  /**
   * The server's `server.body_limit` (default 4 MiB). addItems sends its
   * items in as many appends as keep each request under it; an item too
   * large for any request alone is kept with its longest strings cut.
   */
  bodyLimit?: number;
}

/** Where the SDK's own item is kept in a stored turn's metadata. */
const itemKey = "openai_agents_item";
const pageSize = 1000;
/** Items per append, well under the server's max_messages_per_request. */
const appendBatch = 500;
const utf8 = new TextEncoder();
const bytes = (s: string) => utf8.encode(s).length;

/**
 * A Session whose history is a contextd chat: every item the Runner adds
 * is stored as a turn (readable text for contextd's summaries and
 * retrieval, the item itself in the turn's metadata so getItems gives the
 * Runner back exactly what it stored). popItem deletes the newest turn
 * (DELETE /v1/chats/{id}/messages/{message_id}); clearSession erases the
 * chat.
 *
 * When contextd fails, every method throws its ContextdError (code
 * `unavailable` when it cannot be reached), so the run fails rather than
 * going on with a history that is silently empty or unrecorded.
 */
export class ContextdSession implements Session {
  readonly #o: ContextdSessionOptions;

  constructor(opts: ContextdSessionOptions) {
    if (!opts?.client || !opts.chatId) throw new TypeError("ContextdSession: client and chatId are required");
    this.#o = opts;
  }

  async getSessionId(): Promise<string> {
    return this.#o.chatId;
  }

  /** The history, oldest first; with limit, the newest `limit` items. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = (await this.#turns()).map(toItem);
    return limit !== undefined && limit >= 0 ? items.slice(Math.max(items.length - limit, 0)) : items;
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    // A request's envelope and JSON escapes take some room: batches aim
    // at 90% of the body limit.
    const room = Math.floor((this.#o.bodyLimit ?? 4 << 20) * 0.9);
    const maxContent = this.#o.maxMessageBytes ?? 256 << 10;
    let batch: InputMessage[] = [];
    let size = 0;
    for (const item of items) {
      const m = toMessage(item, maxContent, room);
      const n = bytes(JSON.stringify(m));
      if (batch.length > 0 && (size + n > room || batch.length === appendBatch)) {
        await this.#append(batch);
        batch = [];
        size = 0;
      }
      batch.push(m);
      size += n;
    }
    if (batch.length > 0) await this.#append(batch);
  }

  async #append(messages: InputMessage[]): Promise<void> {
    await this.#o.client.append(this.#o.chatId, messages, { userId: this.#o.userId, agent: this.#o.agent });
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const last = (await this.#turns()).at(-1);
    if (!last) return undefined;
    await this.#o.client.deleteMessage(this.#o.chatId, last.id);
    return toItem(last);
  }

  async clearSession(): Promise<void> {
    try {
      await this.#o.client.deleteChat(this.#o.chatId);
    } catch (err) {
      if (!(err instanceof ContextdError && err.status === 404)) throw err;
    }
  }

  // #turns reads every live turn of the chat (tombstones of deleted turns
  // left out); an unknown chat is an empty history.
  async #turns(): Promise<LiveMessage[]> {
    const out: LiveMessage[] = [];
    for (let after = 0; ; ) {
      let page;
      try {
        page = await this.#o.client.messages(this.#o.chatId, { afterSeq: after, limit: pageSize });
      } catch (err) {
        if (err instanceof ContextdError && err.status === 404) return out;
        throw err;
      }
      out.push(...page.messages.filter((m): m is LiveMessage => !m.deleted));
      if (page.messages.length < pageSize || page.next_after_seq <= after) return out;
      after = page.next_after_seq;
    }
  }
}

type Loose = { type?: string; role?: string; content?: unknown; name?: string; arguments?: string; output?: unknown };

// toMessage renders an item as a turn: its text for contextd (cut to
// maxContent bytes), the item itself in the metadata (its longest strings
// cut only if the whole turn would not fit room bytes).
function toMessage(item: AgentInputItem, maxContent: number, room: number): InputMessage {
  const it = item as Loose;
  let role: Role = "assistant";
  let content = "";
  let name: string | undefined;
  if (it.role === "user" || it.role === "system" || it.role === "assistant") {
    role = it.role;
    content = textOf(it.content);
  } else if (it.type === "function_call") {
    content = `called ${it.name}(${it.arguments ?? ""})`;
  } else if (it.type === "function_call_result") {
    role = "tool";
    name = it.name;
    content = textOf(it.output);
  }
  // contextd refuses empty content: keep a marker for items without text
  // (reasoning, hosted tool calls, ...).
  if (!content.trim()) content = `[${it.type ?? it.role ?? "item"}]`;
  content = cut(content, maxContent, " [… cut: the whole item is in this turn's metadata]");
  const kept = fit(item, room - bytes(JSON.stringify(content)) - 1024);
  return { role, name, content, metadata: { [itemKey]: kept } };
}

// cut shortens s to at most max UTF-8 bytes, note included, on a character
// boundary.
function cut(s: string, max: number, note: string): string {
  const b = utf8.encode(s);
  if (b.length <= max) return s;
  let n = Math.max(max - bytes(note), 0);
  while (n > 0 && (b[n] & 0xc0) === 0x80) n--; // not inside a character
  return new TextDecoder().decode(b.subarray(0, n)) + note;
}

// fit returns item, or a copy of it whose longest strings are cut until
// its JSON is at most max bytes: an item too large for any request is
// kept shortened rather than losing the turn.
function fit(item: AgentInputItem, max: number): AgentInputItem {
  let size = bytes(JSON.stringify(item));
  if (size <= max) return item;
  const copy = structuredClone(item) as unknown as Record<string, unknown>;
  for (let i = 0; i < 16 && size > max; i++) {
    const longest = longestString(copy);
    if (!longest) break;
    const [holder, key, value] = longest;
    holder[key] = cut(value, Math.max(bytes(value) - (size - max) - 64, 0), " [… cut by contextd: too large to store]");
    size = bytes(JSON.stringify(copy));
  }
  return copy as unknown as AgentInputItem;
}

type Holder = Record<string | number, unknown>;

function longestString(v: unknown): [Holder, string | number, string] | undefined {
  let best: [Holder, string | number, string] | undefined;
  const walk = (o: unknown) => {
    if (!o || typeof o !== "object") return;
    for (const [k, x] of Object.entries(o as Holder)) {
      if (typeof x === "string") {
        if (!best || x.length > best[2].length) best = [o as Holder, Array.isArray(o) ? Number(k) : k, x];
      } else walk(x);
    }
  };
  walk(v);
  return best;
}

function toItem(m: LiveMessage): AgentInputItem {
  const stored = m.metadata?.[itemKey];
  if (stored && typeof stored === "object") return stored as AgentInputItem;
  // A turn stored by someone else: rebuild a plain message.
  switch (m.role) {
    case "user":
      return { role: "user", content: m.content };
    case "system":
      return { role: "system", content: m.content };
    default:
      return { role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content }] };
  }
}

function textOf(c: unknown): string {
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map(textOf).join("");
  if (c && typeof c === "object") {
    const p = c as { text?: unknown; refusal?: unknown; type?: string };
    if (typeof p.text === "string") return p.text;
    if (typeof p.refusal === "string") return p.refusal;
  }
  return "";
}
