// @contextd/client: a dependency-free client for the contextd HTTP API.
import type {
  AppendResult, ChatMessage, ContextResult, DumpRecord, EpisodesPage, FactsPage, IncludePart, InputMessage, Kind,
  MessagesPage, Profile, Readiness, SearchHit, SearchHits, Strategy, Summary, SummaryAnswer,
} from "./types.js";

export type * from "./types.js";

/**
 * Every failure of a call: an API error (`status` and the server's `code`,
 * `message`, `field`), or, with `status` 0, no answer at all: code
 * `unavailable` for a refused connection, a network error or a timeout,
 * `aborted` when the caller's signal fired.
 */
export class ContextdError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field?: string;

  constructor(status: number, code: string, message: string, field?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ContextdError";
    this.status = status;
    this.code = code;
    if (field) this.field = field;
  }
}

export interface ContextdOptions {
  /** The server, e.g. `http://localhost:8080`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer <apiKey>`; it fixes the tenant. */
  apiKey?: string;
  /** A fetch implementation (default: the global fetch). */
  fetch?: typeof fetch;
  /** Default time limit of a call in milliseconds, retries included (default 30000). */
  timeoutMs?: number;
  /** How many times a 429 or 503 is retried (default 3). */
  retries?: number;
}

/** Per-call options: an abort signal and a time limit. */
export interface RequestOptions {
  signal?: AbortSignal;
  /** This call's time limit in milliseconds, retries included. */
  timeoutMs?: number;
}

export interface AppendOptions extends RequestOptions {
  userId?: string;
  agent?: string;
}

export interface PageOptions extends RequestOptions {
  afterSeq?: number;
  limit?: number;
}

export interface FactsOptions extends PageOptions {
  includeSuperseded?: boolean;
}

export interface ContextOptions extends RequestOptions {
  query?: string;
  userId?: string;
  agent?: string;
  /** Messages stored before the context is assembled (same rules as append). */
  append?: InputMessage[];
  budgetTokens?: number;
  strategy?: Strategy;
  /** RFC 3339 bounds on what retrieval may return. */
  since?: string;
  until?: string;
  include?: IncludePart[];
}

export interface SearchOptions extends RequestOptions {
  chatId?: string;
  userId?: string;
  k?: number;
  since?: string;
  until?: string;
  kinds?: Kind[];
  minScore?: number;
}

const retryStatuses = new Set([429, 503]);
const maxRetryWaitMs = 30_000;

/** A contextd client: one method per endpoint of the HTTP API. */
export class Contextd {
  readonly #baseURL: string;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #retries: number;

  constructor(opts: ContextdOptions) {
    if (!opts?.baseURL) throw new TypeError("Contextd: baseURL is required");
    this.#baseURL = opts.baseURL.replace(/\/+$/, "");
    this.#headers = { Accept: "application/json" };
    if (opts.apiKey) this.#headers.Authorization = `Bearer ${opts.apiKey}`;
    this.#fetch = opts.fetch ?? globalThis.fetch;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#retries = opts.retries ?? 3;
  }

  /** POST /v1/chats/{chatId}/messages. Messages without an id get one, so a retried append stores nothing twice. */
  append(chatId: string, messages: InputMessage[], opts: AppendOptions = {}): Promise<AppendResult> {
    const body = { user_id: opts.userId, agent: opts.agent, messages: withIds(messages) };
    return this.#json("POST", `/v1/chats/${seg(chatId)}/messages`, opts, body);
  }

  /** GET /v1/chats/{chatId}/messages: a page of stored turns in seq order (tombstones included). */
  messages(chatId: string, opts: PageOptions = {}): Promise<MessagesPage> {
    return this.#json("GET", `/v1/chats/${seg(chatId)}/messages${query({ after_seq: opts.afterSeq, limit: opts.limit })}`, opts);
  }

  /** DELETE /v1/chats/{chatId}/messages/{messageId}: forget one turn and everything derived from it. */
  async deleteMessage(chatId: string, messageId: string, opts: RequestOptions = {}): Promise<void> {
    await this.#json("DELETE", `/v1/chats/${seg(chatId)}/messages/${seg(messageId)}`, opts);
  }

  /** POST /v1/context: the token-budgeted context of a chat. */
  context(chatId: string, opts: ContextOptions = {}): Promise<ContextResult> {
    const body = {
      chat_id: chatId, query: opts.query, user_id: opts.userId, agent: opts.agent,
      append: opts.append && withIds(opts.append), budget_tokens: opts.budgetTokens, strategy: opts.strategy,
      since: opts.since, until: opts.until, include: opts.include,
    };
    return this.#json("POST", "/v1/context", opts, body);
  }

  /** The OpenAI-style messages to put before a model call (POST /v1/context with include messages). */
  async contextMessages(chatId: string, opts: ContextOptions = {}): Promise<ChatMessage[]> {
    const res = await this.context(chatId, { ...opts, include: ["messages"] });
    return res.messages ?? [];
  }

  /** POST /v1/search: hits best first; the array's `degraded` says what the answer lacks. */
  async search(q: string, opts: SearchOptions = {}): Promise<SearchHits> {
    const body = {
      query: q, chat_id: opts.chatId, user_id: opts.userId, k: opts.k, since: opts.since, until: opts.until,
      kinds: opts.kinds, min_score: opts.minScore,
    };
    const res = await this.#json<{ hits: SearchHit[]; degraded?: string[] }>("POST", "/v1/search", opts, body);
    return Object.defineProperty(res.hits, "degraded", { value: res.degraded ?? [], enumerable: false }) as SearchHits;
  }

  /** GET /v1/chats/{chatId}/summary: the running summary, the newest `chainLimit` records of its chain (server default 50) and the newest episodes. */
  summary(chatId: string, opts: RequestOptions & { chainLimit?: number } = {}): Promise<SummaryAnswer> {
    return this.#json("GET", `/v1/chats/${seg(chatId)}/summary${query({ chain_limit: opts.chainLimit })}`, opts);
  }

  /** POST /v1/chats/{chatId}/summary/refresh: summarise now. Null when the server accepted it for later (202). */
  refreshSummary(chatId: string, opts: RequestOptions = {}): Promise<{ summary?: Summary; degraded?: string[] } | null> {
    return this.#json("POST", `/v1/chats/${seg(chatId)}/summary/refresh`, opts);
  }

  /** GET /v1/chats/{chatId}/episodes: a page of closed episodes in seq order. */
  episodes(chatId: string, opts: PageOptions = {}): Promise<EpisodesPage> {
    return this.#json("GET", `/v1/chats/${seg(chatId)}/episodes${query({ after_seq: opts.afterSeq, limit: opts.limit })}`, opts);
  }

  /** GET /v1/chats/{chatId}/facts: a page of the chat's facts in seq order. */
  facts(chatId: string, opts: FactsOptions = {}): Promise<FactsPage> {
    const q = query({ after_seq: opts.afterSeq, limit: opts.limit, include_superseded: opts.includeSuperseded });
    return this.#json("GET", `/v1/chats/${seg(chatId)}/facts${q}`, opts);
  }

  /** GET /v1/users/{userId}/profile: what is known about a user across their chats. */
  profile(userId: string, opts: RequestOptions = {}): Promise<{ user_id: string; profile: Profile }> {
    return this.#json("GET", `/v1/users/${seg(userId)}/profile`, opts);
  }

  /** DELETE /v1/users/{userId}/profile/items/{itemId}: forget a profile item for good. */
  async forgetProfileItem(userId: string, itemId: string, opts: RequestOptions = {}): Promise<void> {
    await this.#json("DELETE", `/v1/users/${seg(userId)}/profile/items/${seg(itemId)}`, opts);
  }

  /** DELETE /v1/chats/{chatId}: erase a chat from every store. */
  async deleteChat(chatId: string, opts: RequestOptions = {}): Promise<void> {
    await this.#json("DELETE", `/v1/chats/${seg(chatId)}`, opts);
  }

  /** DELETE /v1/users/{userId}: erase every chat of a user and their profile. */
  async deleteUser(userId: string, opts: RequestOptions = {}): Promise<void> {
    await this.#json("DELETE", `/v1/users/${seg(userId)}`, opts);
  }

  /** GET /v1/chats/{chatId}/export: the chat in the dump format, one record per line. */
  exportChat(chatId: string, opts: RequestOptions = {}): Promise<DumpRecord[]> {
    return this.#ndjson(`/v1/chats/${seg(chatId)}/export`, opts);
  }

  /** GET /v1/users/{userId}/export: every chat of a user and their profile in the dump format. */
  exportUser(userId: string, opts: RequestOptions = {}): Promise<DumpRecord[]> {
    return this.#ndjson(`/v1/users/${seg(userId)}/export`, opts);
  }

  /** GET /readyz: each backend's state; a 503 (not ready) is thrown as ContextdError. */
  async ready(opts: RequestOptions = {}): Promise<Readiness> {
    // Not retried: a 503 here is the answer, not a passing overload.
    const res = await this.#request("GET", "/readyz", opts, undefined, 0);
    return parsed(res, "GET", "/readyz", await readBody(res, opts, "GET", "/readyz"), (t) => JSON.parse(t)) as Readiness;
  }

  async #json<T>(method: string, path: string, opts: RequestOptions, body?: unknown): Promise<T> {
    const res = await this.#request(method, path, opts, body);
    const text = await readBody(res, opts, method, path);
    return parsed(res, method, path, text, (t) => (t ? JSON.parse(t) : null)) as T;
  }

  async #ndjson(path: string, opts: RequestOptions): Promise<DumpRecord[]> {
    const res = await this.#request("GET", path, opts);
    const text = await readBody(res, opts, "GET", path);
    return parsed(res, "GET", path, text, (t) =>
      t.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as DumpRecord),
    );
  }

  // #request sends the call, retrying 429 and 503 (honouring Retry-After)
  // until the call's time limit, and turns every failure into a
  // ContextdError.
  async #request(method: string, path: string, opts: RequestOptions, body?: unknown, retries = this.#retries): Promise<Response> {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.#timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const headers = { ...this.#headers };
    let payload: string | undefined;
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    const deadline = Date.now() + (opts.timeoutMs ?? this.#timeoutMs);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.#fetch(this.#baseURL + path, { method, headers, body: payload, signal });
      } catch (err) {
        throw transportError(err, opts.signal, method, path);
      }
      if (res.ok) return res;
      // A wait that would outlast the call's time limit is not waited:
      // the server's own error (429 rate_limited, 503 ...) is the answer.
      const wait = retryStatuses.has(res.status) && attempt < retries ? retryWait(res, attempt) : undefined;
      if (wait !== undefined && Date.now() + wait < deadline) {
        await res.body?.cancel();
        await sleep(wait, signal).catch((err) => {
          throw transportError(err, opts.signal, method, path);
        });
        continue;
      }
      throw await apiError(res);
    }
  }
}

// readBody reads an answer's body; a failure on the way (the time limit,
// the caller's abort, a reset connection) is a ContextdError like one
// before the answer.
async function readBody(res: Response, opts: RequestOptions, method: string, path: string): Promise<string> {
  try {
    return await res.text();
  } catch (err) {
    throw transportError(err, opts.signal, method, path);
  }
}

// parsed decodes a successful answer's body; one that is not the API's
// JSON (a proxy's login page, say) is a ContextdError invalid_response.
function parsed<T>(res: Response, method: string, path: string, text: string, decode: (text: string) => T): T {
  try {
    return decode(text);
  } catch (err) {
    return throwInvalid(res, method, path, text, err);
  }
}

function throwInvalid(res: Response, method: string, path: string, text: string, cause: unknown): never {
  throw new ContextdError(res.status, "invalid_response", `${method} ${path}: the answer is not contextd's JSON: ${text.slice(0, 200)}`, undefined, { cause });
}

function transportError(err: unknown, callerSignal: AbortSignal | undefined, method: string, path: string): ContextdError {
  if (callerSignal?.aborted) return new ContextdError(0, "aborted", `${method} ${path}: aborted by the caller`, undefined, { cause: err });
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  const why = e?.name === "TimeoutError" ? "timed out" : (e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err));
  return new ContextdError(0, "unavailable", `${method} ${path}: contextd is unreachable (${why})`, undefined, { cause: err });
}

async function apiError(res: Response): Promise<ContextdError> {
  const text = await res.text().catch(() => "");
  try {
    const e = JSON.parse(text)?.error;
    if (e && typeof e.code === "string") return new ContextdError(res.status, e.code, e.message ?? "", e.field || undefined);
  } catch {
    // not the API's error JSON (a proxy's page, say): fall through
  }
  return new ContextdError(res.status, "http_error", `HTTP ${res.status}: ${text.slice(0, 200)}`);
}

// retryWait honours Retry-After (seconds or an HTTP date), else backs off
// exponentially with jitter.
function retryWait(res: Response, attempt: number): number {
  const ra = res.headers.get("Retry-After");
  if (ra) {
    const secs = Number(ra);
    const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(ra) - Date.now();
    if (Number.isFinite(ms)) return Math.min(Math.max(ms, 0), maxRetryWaitMs);
  }
  return Math.min(200 * 2 ** attempt, 10_000) * (0.5 + Math.random() / 2);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function seg(s: string): string {
  return encodeURIComponent(s);
}

function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

// withIds gives each message without an id one, written into the caller's
// object: a retry of the same messages after a lost answer (a timeout, a
// reset) then sends the same ids, and stores nothing twice.
function withIds(messages: InputMessage[]): InputMessage[] {
  for (const m of messages) if (!m.id) m.id = globalThis.crypto.randomUUID();
  return messages;
}
