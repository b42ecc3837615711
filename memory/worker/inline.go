package worker

// InlineFor reports whether a lagging summary of the agent's chats may be
// extended on the request path: only when it is extractive (the summariser
// is its own fallback, i.e. no LLM is configured), which costs well under a
// millisecond per few hundred turns. LLM summaries stay in the background.
func (w *Worker) InlineFor(agent string) bool {
	return w.Summarizer != nil && w.Summarizer == w.Fallback && w.settings(agent).Enabled
}
