// Fake models for the adapters' tests: the AI SDK's own mock (ai/test)
// and a Model for the OpenAI Agents SDK's Runner.
import { MockLanguageModelV3, convertArrayToReadableStream } from "ai/test";
import { Usage } from "@openai/agents";

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const finishReason = { unified: "stop", raw: "stop" };

// A mock model that answers `reply(i)` to its i-th call and records every
// prompt it was sent.
export function mockModel(reply = (i) => `answer ${i}`) {
  let n = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => ({ content: [{ type: "text", text: reply(n++) }], finishReason, usage, warnings: [] }),
    doStream: async () => {
      const text = reply(n++);
      const parts = [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" }];
      for (const w of text.match(/\S+\s*/g)) parts.push({ type: "text-delta", id: "t", delta: w });
      parts.push({ type: "text-end", id: "t" }, { type: "finish", finishReason, usage });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}

// A Model that answers `reply(i)` to its i-th request and keeps each
// request's input.
export class FakeModel {
  constructor(reply = (i) => `answer ${i}`) {
    this.reply = reply;
    this.requests = [];
  }

  async getResponse(request) {
    const i = this.requests.push(request) - 1;
    return {
      usage: new Usage(),
      output: [{ type: "message", id: `msg_${i}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: this.reply(i) }] }],
      responseId: `resp_${i}`,
    };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error("FakeModel does not stream");
  }
}

