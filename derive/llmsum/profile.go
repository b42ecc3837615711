package llmsum

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/contextd/contextd/memory"
)

// The profile prompt. The user prompt (overridable per agent as
// prompt_sections.user_profile_prompt) must hold both placeholders.
const (
	PlaceholderExistingProfile = "{existing_profile}"
	PlaceholderChatSummary     = "{chat_summary}"

	profileSystem = `You keep a profile of a user across their conversations with assistants. Reply with JSON only.`

	DefaultProfilePrompt = `Merge what the conversation summary below says about the user into their profile. Keep what is still true, add what is new about the user (people, places and things in their life, their preferences, the topics they come back to, questions still open), and drop only what the summary contradicts. Reply with one JSON object:
{"entities":[{"name":"","type":"","details":""}],"user_preferences":[],"topics":[],"open_questions":[]}

Profile so far:
` + PlaceholderExistingProfile + `

Conversation summary:
` + PlaceholderChatSummary
)

// ProfilePrompt is the prompt an agent's override resolves to.
func ProfilePrompt(override string) string {
	if strings.TrimSpace(override) != "" {
		return override
	}
	return DefaultProfilePrompt
}

// MergeProfile asks the LLM, in one call, for the user's profile merged
// with a chat's summary; the answer's lists come back as the result's
// Summary, with the call's tokens (also on error: a bad reply cost them).
// An LLM that fails is ErrUnavailable-like (the error is returned); a reply
// that holds no profile is memory.ErrProfileReply.
func (s *Summarizer) MergeProfile(ctx context.Context, prompt string, existing memory.Profile, chat memory.Summary) (memory.SummarizeResult, error) {
	prof, _ := json.Marshal(profileLists(existing))
	sum, _ := json.Marshal(struct {
		Entities        []memory.Entity `json:"entities"`
		UserPreferences []string        `json:"user_preferences"`
		Topics          []string        `json:"topics"`
		OpenQuestions   []string        `json:"open_questions"`
		Narrative       string          `json:"narrative"`
	}{chat.Entities, chat.UserPreferences, chat.Topics, chat.OpenQuestions, chat.Narrative})
	user := withPlaceholders(ProfilePrompt(prompt), map[string]string{
		PlaceholderExistingProfile: string(prof), PlaceholderChatSummary: string(sum)})
	var acc memory.SummarizeResult
	format := ProfileReply()
	reply, err := s.call(ctx, "", &format, profileSystem, user, &acc)
	if err != nil {
		return acc, err
	}
	if _, err := firstObject(Clean(reply)); err != nil {
		return acc, memory.ErrProfileReply
	}
	out, err := ParseSummary(reply)
	if err != nil || (len(out.Entities)+len(out.UserPreferences)+len(out.Topics)+len(out.OpenQuestions) == 0) {
		return acc, memory.ErrProfileReply
	}
	acc.Summary = out
	return acc, nil
}

func profileLists(p memory.Profile) any {
	texts := func(items []memory.ProfileItem) []string {
		out := make([]string, 0, len(items))
		for _, it := range items {
			out = append(out, it.Text)
		}
		return out
	}
	ents := make([]memory.Entity, 0, len(p.Entities))
	for _, e := range p.Entities {
		ents = append(ents, memory.Entity{Name: e.Name, Type: e.Type, Details: e.Details})
	}
	return map[string]any{"entities": ents, "user_preferences": texts(p.UserPreferences),
		"topics": texts(p.Topics), "open_questions": texts(p.OpenQuestions)}
}
