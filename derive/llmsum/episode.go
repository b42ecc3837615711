package llmsum

import (
	"context"
	"fmt"
	"strings"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// The episode prompts. The user prompt (overridable per agent as
// prompt_sections.episode_summary_prompt) must hold {transcript}.
const (
	episodeSystem = `You summarise one episode of a conversation between a user and an assistant. Reply with JSON only.`

	DefaultEpisodePrompt = `Summarise the episode below (lines: [seq] role: text). Reply with one JSON object:
{"short":"one or two sentences: what it was about and what came of it","topics":[],"entities":[{"name":"","type":"","details":""}],"actions_taken":[],"decisions":[],"open_questions":[],"user_preferences":[],"narrative":"","facts":[{"text":"","seqs":[],"kind":"preference|plan|decision|event|attribute|other"}]}
facts: short dated statements worth remembering, with the seqs of the turns that say them.
Lines of earlier context only help you read the episode: do not summarise them. Be concise; never invent facts.

` + PlaceholderTranscript

	// MaxEpisodeContextTokens caps each turn of earlier context.
	MaxEpisodeContextTokens = 120
)

// EpisodePrompt is the prompt an agent's override resolves to.
func EpisodePrompt(override string) string {
	if strings.TrimSpace(override) != "" {
		return override
	}
	return DefaultEpisodePrompt
}

// SummarizeEpisode implements memory.EpisodeSummarizer with exactly one LLM
// call (no retry is a second episode call: retries repeat the same call).
// A reply that is not JSON keeps its text as the short summary over the
// extractive structured one (summary_narrative_only); a model that stays
// down hands the episode to the extractive summarizer (llm_unavailable).
func (s *Summarizer) SummarizeEpisode(ctx context.Context, req memory.EpisodeRequest) (memory.EpisodeResult, error) {
	prompt := EpisodePrompt(req.Prompt)
	version := memory.EpisodePromptVersion(prompt)
	user := withPlaceholders(prompt, map[string]string{PlaceholderTranscript: s.episodeTranscript(prompt, req)})
	var acc memory.SummarizeResult
	format := EpisodeReply()
	reply, err := s.call(ctx, req.Model, &format, episodeSystem, user, &acc)
	if err != nil {
		if ctx.Err() != nil {
			return memory.EpisodeResult{}, ctx.Err()
		}
		return s.episodeFallback(ctx, req, acc, DegradedLLMUnavailable, err)
	}
	short, sum, ok := parseEpisode(reply)
	if !ok {
		return s.episodeFallback(ctx, req, acc, DegradedNarrativeOnly, nil, short)
	}
	facts, dropped := parseFacts(reply, req)
	model := s.opts.ModelName
	if req.Model != "" {
		model = req.Model
	}
	sum.Model, sum.PromptVersion, sum.UpdatedAt = model, version, s.now().UTC()
	if len(req.Turns) > 0 {
		sum.CoveredFromSeq, sum.CoveredToSeq = req.Turns[0].Seq, req.Turns[len(req.Turns)-1].Seq
	}
	res := memory.EpisodeResult{Short: short, Summary: sum, Facts: facts, Model: model, PromptVersion: version,
		InputTokens: acc.InputTokens, OutputTokens: acc.OutputTokens, Calls: acc.Calls}
	if dropped > 0 {
		res.Degraded = []string{DegradedFactsDropped}
	}
	return res, nil
}

// parseEpisode reads {"short", ...Summary fields} as tolerantly as a
// running summary reply ({"short", "summary": {...}} too). ok is false
// when no summary field is there; short is then the reply's text, if any.
func parseEpisode(reply string) (short string, sum memory.Summary, ok bool) {
	text := Clean(reply)
	obj, err := firstObject(text)
	if err == nil {
		short = strings.TrimSpace(narrativeOf(obj["short"]))
	}
	sum, err = ParseSummary(reply)
	if err != nil {
		if short == "" {
			short = salvageNarrative(text)
		}
		return capRunes(strings.Join(strings.Fields(short), " "), memory.MaxShortChars), memory.Summary{}, false
	}
	if short == "" {
		short = sum.Short()
	}
	return capRunes(strings.Join(strings.Fields(short), " "), memory.MaxShortChars), sum, true
}

// episodeTranscript renders the earlier context and the episode's turns,
// each turn cut so that the call stays within the input budget.
func (s *Summarizer) episodeTranscript(prompt string, req memory.EpisodeRequest) string {
	room := max(s.opts.InputBudgetTokens-tokens.Count(episodeSystem)-tokens.Count(prompt), s.opts.InputBudgetTokens/4)
	var b strings.Builder
	if len(req.Context) > 0 {
		b.WriteString("Earlier context (not part of this episode):\n")
		for _, t := range req.Context {
			line := tokens.Truncate(formatTurn(t), MaxEpisodeContextTokens)
			room -= tokens.Count(line) + 1
			b.WriteString(line + "\n")
		}
		b.WriteString("\n")
	}
	if len(req.Turns) > 0 {
		fmt.Fprintf(&b, "The episode (turns %d-%d):\n", req.Turns[0].Seq, req.Turns[len(req.Turns)-1].Seq)
	}
	lines := make([]string, len(req.Turns))
	total := 0
	for i, t := range req.Turns {
		lines[i] = formatTurn(t)
		total += tokens.Count(lines[i]) + 1
	}
	perTurn := 0 // 0: everything fits
	if total > room && len(lines) > 0 {
		perTurn = max(room/len(lines), 16)
	}
	for _, l := range lines {
		if perTurn > 0 {
			l = tokens.Truncate(l, perTurn)
		}
		b.WriteString(l + "\n")
	}
	return strings.TrimSpace(b.String())
}

// episodeFallback summarises the episode extractively; short, when given,
// is what the model did say and replaces the extractive short summary.
func (s *Summarizer) episodeFallback(ctx context.Context, req memory.EpisodeRequest, acc memory.SummarizeResult, reason string, cause error, short ...string) (memory.EpisodeResult, error) {
	res, err := extractive.New().SummarizeEpisode(ctx, req)
	if err != nil {
		return memory.EpisodeResult{}, fmt.Errorf("llmsum: episode fallback after %v: %w", cause, err)
	}
	if len(short) > 0 && strings.TrimSpace(short[0]) != "" {
		res.Short = short[0]
	}
	res.Degraded = []string{reason}
	res.InputTokens, res.OutputTokens, res.Calls = acc.InputTokens, acc.OutputTokens, acc.Calls
	return res, nil
}
