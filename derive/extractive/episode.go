package extractive

import (
	"context"
	"strings"

	"github.com/contextd/contextd/internal/prose"
	"github.com/contextd/contextd/memory"
)

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
	short := res.Summary.Short()
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

// FirstWords is the gist of turns that have no key sentence: the first
// prose sentence, said by its speaker ("Audrey said: "Yup, ttyl!""); for
// turns without prose, what the first one shared ("The assistant shared
// code."); "" only when no turn has content.
func FirstWords(turns []memory.Message) string {
	sents, _, _ := proseOf(turns)
	if len(sents) > 0 {
		return clip(state(sents[0]), memory.MaxShortChars)
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
			return prose.SentenceCase(prose.Subject(prose.Read(t).Speaker, t.Role)) + ` said: "` + clip(body, memory.MaxShortChars-30) + `"`
		}
	}
	return ""
}
