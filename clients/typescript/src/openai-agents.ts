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
}

/** Where the SDK's own item is kept in a stored turn's metadata. */
const itemKey = "openai_agents_item";
const pageSize = 1000;

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
    if (items.length === 0) return;
    await this.#o.client.append(this.#o.chatId, items.map(toMessage), { userId: this.#o.userId, agent: this.#o.agent });
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

// toMessage renders an item as a turn: its text for contextd, the item
// itself in the metadata.
function toMessage(item: AgentInputItem): InputMessage {
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
  return { role, name, content, metadata: { [itemKey]: item } };
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
