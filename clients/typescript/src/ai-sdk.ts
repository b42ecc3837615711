// @contextd/client/ai-sdk: contextd as a middleware for the AI SDK's
// wrapLanguageModel (package `ai`, 6.x: LanguageModelV3Middleware). Only
// types are imported from `ai`: the package has no runtime dependency.
import type { LanguageModelMiddleware } from "ai";
import { ContextdError, type Contextd } from "./index.js";
import type { ChatMessage, ContextResult, Strategy } from "./types.js";

export interface ContextdMiddlewareOptions {
  client: Contextd;
  chatId: string;
  userId?: string;
  agent?: string;
  budgetTokens?: number;
  strategy?: Strategy;
  /**
   * Called when contextd fails. The model call goes on regardless: without
   * memory (the caller's prompt as it came) when the context could not be
   * had, and unrecorded when the reply could not be stored. Default: a
   * console warning.
   */
  onError?: (error: ContextdError, stage: "context" | "store") => void;
  /** Throw contextd's error instead of going on without memory. */
  required?: boolean;
  /** Called with each context contextd assembled (usage, degraded, ...). */
  onContext?: (context: ContextResult) => void;
}

// The model-call types, read off the middleware type so that `ai` is the
// only package the declarations name.
type Params = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"];
type PromptMessage = Params["prompt"][number];
type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware["wrapStream"]>>>;
type StreamPart = StreamResult["stream"] extends ReadableStream<infer P> ? P : never;

/**
 * A middleware that gives the model contextd's memory of the chat. Before
 * each call it stores the newest user message and asks POST /v1/context
 * with it as the query; the model gets the caller's system prompt, then
 * contextd's messages (retrieved memory, the summary, the recent turns),
 * then the newest user message and whatever followed it in this call (tool
 * steps). Earlier turns of the caller's prompt are replaced by contextd's.
 * After the call (generate, or when a stream finishes) the assistant's
 * text reply is stored.
 */
export function contextdMiddleware(opts: ContextdMiddlewareOptions): LanguageModelMiddleware {
  const report = (err: unknown, stage: "context" | "store") => {
    const e = err instanceof ContextdError ? err : new ContextdError(0, "internal", String(err), undefined, { cause: err });
    if (opts.required) throw e;
    if (opts.onError) opts.onError(e, stage);
    else console.warn(`contextd ${stage} failed, going on without memory: ${e.code}: ${e.message}`);
  };
  // The AI SDK retries a failed model call with the same prompt array: the
  // user message keeps its id, so a retry does not store it twice.
  const ids = new WeakMap<object, string>();
  const store = async (text: string) => {
    if (!text.trim()) return; // tool calls only: nothing to remember
    try {
      await opts.client.append(opts.chatId, [{ role: "assistant", content: text }], { userId: opts.userId, agent: opts.agent });
    } catch (err) {
      report(err, "store");
    }
  };
  return {
    specificationVersion: "v3",
    async transformParams({ params }) {
      try {
        return await withMemory(opts, params, ids);
      } catch (err) {
        report(err, "context");
        return params;
      }
    },
    async wrapGenerate({ doGenerate }) {
      const result = await doGenerate();
      await store(result.content.map((c) => (c.type === "text" ? c.text : "")).join(""));
      return result;
    },
    async wrapStream({ doStream }) {
      const { stream, ...rest } = await doStream();
      let text = "";
      const tap = new TransformStream<StreamPart, StreamPart>({
        transform(part, ctl) {
          if (part.type === "text-delta") text += part.delta;
          ctl.enqueue(part);
        },
        // Only a stream that finished is stored; an aborted one is not.
        flush: () => store(text),
      });
      return { stream: stream.pipeThrough(tap), ...rest };
    },
  };
}

async function withMemory(opts: ContextdMiddlewareOptions, params: Params, ids: WeakMap<object, string>): Promise<Params> {
  const prompt = params.prompt;
  const system = prompt.filter((m) => m.role === "system");
  const lastUser = prompt.findLastIndex((m) => m.role === "user");
  const tail = lastUser >= 0 ? prompt.slice(lastUser) : [];
  const query = lastUser >= 0 ? textOf(prompt[lastUser]) : undefined;
  // A new turn ends with the user's message; a later step of the same
  // call (after a tool call) has it stored already.
  const isNewTurn = lastUser >= 0 && lastUser === prompt.length - 1 && query !== "";
  let id = ids.get(prompt);
  if (isNewTurn && !id) {
    id = globalThis.crypto.randomUUID();
    ids.set(prompt, id);
  }
  const res = await opts.client.context(opts.chatId, {
    query, userId: opts.userId, agent: opts.agent, budgetTokens: opts.budgetTokens, strategy: opts.strategy,
    include: ["messages"], append: isNewTurn ? [{ id, role: "user", content: query! }] : undefined,
    signal: params.abortSignal,
  });
  opts.onContext?.(res);
  const recent = isNewTurn ? (res.messages ?? []) : withoutSteps(res.messages ?? [], tail);
  return { ...params, prompt: [...system, ...recent.map(toPrompt), ...tail] };
}

// withoutSteps drops, from the end of contextd's messages, the assistant
// texts this call's earlier steps stored (wrapGenerate stores each step's
// text, "Let me check." beside a tool call): the tail holds them already,
// after the user's message, where they belong.
function withoutSteps(msgs: ChatMessage[], tail: PromptMessage[]): ChatMessage[] {
  const said = new Set(tail.filter((m) => m.role === "assistant").map(textOf).filter((t) => t.trim() !== ""));
  let end = msgs.length;
  while (end > 0 && msgs[end - 1].role === "assistant" && said.has(msgs[end - 1].content)) end--;
  return msgs.slice(0, end);
}

function textOf(m: PromptMessage): string {
  if (typeof m.content === "string") return m.content;
  return m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

function toPrompt(m: ChatMessage): PromptMessage {
  switch (m.role) {
    case "system":
      return { role: "system", content: m.content };
    case "user":
      return { role: "user", content: [{ type: "text", text: m.content }] };
    default: // assistant; contextd shows tool turns as labelled assistant turns
      return { role: "assistant", content: [{ type: "text", text: m.content }] };
  }
}
