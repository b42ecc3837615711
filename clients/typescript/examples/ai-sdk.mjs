import { generateText, wrapLanguageModel } from "ai";
import { Contextd } from "@contextd/client";
import { contextdMiddleware } from "@contextd/client/ai-sdk";

const contextd = new Contextd({ baseURL: process.env.CONTEXTD_URL ?? "http://localhost:8080" });

// model: any AI SDK language model, e.g. openai("gpt-4.1-mini") from @ai-sdk/openai.
export async function reply(model, chatId, userText) {
  const withMemory = wrapLanguageModel({
    model,
    middleware: contextdMiddleware({ client: contextd, chatId, userId: "alice", strategy: "rag_augmented" }),
  });
  // Send only the new user message: contextd supplies the rest of the chat.
  const { text } = await generateText({ model: withMemory, system: "You are a helpful travel agent.", prompt: userText });
  return text;
}
