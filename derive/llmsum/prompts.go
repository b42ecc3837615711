package llmsum

import (
	"strings"

	"github.com/contextd/contextd/memory"
)

// Placeholders the prompts carry.
const (
	PlaceholderTranscript      = "{transcript}"
	PlaceholderExistingSummary = "{existing_summary}"
	PlaceholderNewMessages     = "{new_messages}"
)

// The default prompts are kept short on purpose: they are sent with every
// call, so their tokens count against the input budget each time.
const (
	defaultSystem = `You maintain the running memory summary of a conversation between a user and an assistant.
Reply with one JSON object and nothing else:
{"topics":[string],"entities":[{"name":string,"type":string,"details":string}],"actions_taken":[string],"decisions":[string],"open_questions":[string],"user_preferences":[string],"narrative":string}
topics: short subjects discussed. entities: people, organizations, places, products, dates, amounts; type is one word; details say what matters about them. actions_taken: what was actually done. decisions: what was agreed or chosen. open_questions: questions still unanswered. user_preferences: the user's lasting likes, dislikes and instructions. narrative: a few sentences on what happened, oldest first.
When extending a summary, rewrite the whole summary: keep what still holds, add the new facts, drop facts the new messages contradict and questions they answer. Be concise and never invent facts.`

	defaultCompression = "Summarise this conversation.\n\n" + PlaceholderTranscript

	defaultExtension = "Current summary:\n" + PlaceholderExistingSummary +
		"\n\nNew messages:\n" + PlaceholderNewMessages + "\n\nReturn the updated summary."

	// narrativeOnly is appended to the system prompt when the agent turned
	// structured output off.
	narrativeOnly = "\n\nOverride: reply with the narrative only, as plain prose: no JSON, no lists."
)

// DefaultPrompts are the built-in prompts.
func DefaultPrompts() memory.Prompts {
	return memory.Prompts{System: defaultSystem, Compression: defaultCompression, Extension: defaultExtension}
}

// ResolvePrompts fills the empty fields of overrides (an agent's
// prompt_sections) with the defaults, and appends summaryPrompt
// (memory.summary_prompt) to the system prompt as extra instructions.
func ResolvePrompts(overrides memory.Prompts, summaryPrompt string) memory.Prompts {
	p := DefaultPrompts()
	if strings.TrimSpace(overrides.System) != "" {
		p.System = overrides.System
	}
	if strings.TrimSpace(overrides.Compression) != "" {
		p.Compression = overrides.Compression
	}
	if strings.TrimSpace(overrides.Extension) != "" {
		p.Extension = overrides.Extension
	}
	if s := strings.TrimSpace(summaryPrompt); s != "" {
		p.System += "\n\nAdditional instructions:\n" + s
	}
	return p
}

// fill substitutes placeholders in one pass, so that text inside a value
// that looks like a placeholder is left alone.
func fill(tmpl string, values map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		tmpl = tmpl[i:]
		matched := false
		for k, v := range values {
			if strings.HasPrefix(tmpl, k) {
				b.WriteString(v)
				tmpl = tmpl[len(k):]
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte('{')
			tmpl = tmpl[1:]
		}
	}
}
