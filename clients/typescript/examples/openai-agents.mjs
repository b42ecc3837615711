import { Agent, Runner } from "@openai/agents";
import { Contextd } from "@contextd/client";
import { ContextdSession } from "@contextd/client/openai-agents";

const contextd = new Contextd({ baseURL: process.env.CONTEXTD_URL ?? "http://localhost:8080" });
const runner = new Runner();

// model: a model name your provider resolves (e.g. "gpt-4.1-mini") or a Model.
export async function ask(model, chatId, question) {
  const agent = new Agent({ name: "Travel agent", instructions: "You help plan trips.", model });
  const session = new ContextdSession({ client: contextd, chatId, userId: "alice" });
  const result = await runner.run(agent, question, { session });
  return result.finalOutput;
}
