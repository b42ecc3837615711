package extractive

import (
	"context"
	"strings"

	"github.com/contextd/contextd/memory"
)

// MaxShortChars caps an episode's short summary.
const MaxShortChars = 320

// SummarizeEpisode implements memory.EpisodeSummarizer without an LLM: the
// structured summary of the episode's own turns (req.Context is not owned
// and not read) and, as the short summary, its key sentences.
func (s *Summarizer) SummarizeEpisode(ctx context.Context, req memory.EpisodeRequest) (memory.EpisodeResult, error) {
	res, err := s.Summarize(ctx, memory.SummarizeRequest{Chat: req.Chat, Turns: req.Turns, Structured: true})
	if err != nil {
		return memory.EpisodeResult{}, err
	}
	return memory.EpisodeResult{
		Short:         Short(res.Summary),
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
