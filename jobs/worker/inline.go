package worker

// InlineFor reports whether a lagging summary of the agent's chats may be
// extended on the request path: only when the summariser declares it
// writes without an LLM (UsesLLM false: extractive), which costs well under
// a millisecond per few hundred turns. LLM summaries stay in the background.
func (w *Worker) InlineFor(agent string) bool {
	return w.Summarizer != nil && !w.Summarizer.UsesLLM() && w.settings(agent).Enabled
}
