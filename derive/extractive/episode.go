package extractive

import (
	"context"
	"strings"

	"github.com/contextd/contextd/internal/prose"
	"github.com/contextd/contextd/memory"
)

// MaxShortChars caps an episode's short summary.
const MaxShortChars = 320

// SummarizeEpisode implements memory.EpisodeSummarizer without an LLM: the
// structured summary of the episode's own turns (req.Context is not owned
// and not read) and, as the short summary, its key sentences — or, when
// it has none, its first sentence with content: an episode always has a
// short summary.
func (s *Summarizer) SummarizeEpisode(ctx context.Context, req memory.EpisodeRequest) (memory.EpisodeResult, error) {
	res, err := s.Summarize(ctx, memory.SummarizeRequest{Chat: req.Chat, Turns: req.Turns, Structured: true})
	if err != nil {
		return memory.EpisodeResult{}, err
	}
	short := Short(res.Summary)
	if short == "" {
		short = FirstWords(req.Turns)
	}
	return memory.EpisodeResult{
		Short:         short,
		Summary:       res.Summary,
		Model:         Name,
		PromptVersion: PromptVersion,
	}, nil
}

// Short is a one- or two-sentence gist of a summary: its narrative's first
// two sentences, or its topics when it has no narrative.
func Short(s memory.Summary) string {
	if sents := splitSentences(s.Narrative); len(sents) > 0 {
		return clip(strings.Join(sents[:min(2, len(sents))], " "), MaxShortChars)
	}
	if len(s.Topics) > 0 {
		return clip("About "+strings.Join(s.Topics, ", ")+".", MaxShortChars)
	}
	return ""
}

// FirstWords is the gist of turns that have no key sentence: the first
// prose sentence, said by its speaker ("Audrey said: "Yup, ttyl!""); for
// turns without prose, what the first one shared ("The assistant shared
// code."); "" only when no turn has content.
func FirstWords(turns []memory.Message) string {
	sents, _, _ := proseOf(turns)
	if len(sents) > 0 {
		return clip(state(sents[0]), MaxShortChars)
	}
	for _, t := range turns {
		if t.Deleted || t.Role == memory.RoleSystem {
			continue
		}
		pt := prose.Read(t)
		if kinds := prose.Shares(pt.Body); len(kinds) > 0 {
			return prose.SentenceCase(prose.Subject(pt.Speaker, t.Role)) + " shared " + strings.Join(kinds, " and ") + "."
		}
	}
	for _, t := range turns {
		if t.Deleted || t.Role == memory.RoleSystem {
			continue
		}
		if body := strings.TrimSpace(prose.Read(t).Body); body != "" {
			return prose.SentenceCase(prose.Subject(prose.Read(t).Speaker, t.Role)) + ` said: "` + clip(body, MaxShortChars-30) + `"`
		}
	}
	return ""
}
