package rag

import (
	"strings"

	"github.com/contextd/contextd/memory"
)

// Episodes are indexed beside the turns, in the same namespace, as points
// of Kind memory.KindEpisode whose identity is (tenant, chat, kind,
// from_seq) and whose content is the episode's short summary. The indexer
// drains the store's unindexed episodes after its turns, in the one drain
// loop (jobs/index).

// maxEpisodeTextRunes caps the text an episode is embedded from.
const maxEpisodeTextRunes = 2000

// EpisodeText is what an episode is embedded and matched from: its short
// summary, then its topics, entities, decisions and narrative, so that a
// query in the summary's words finds it.
func EpisodeText(e memory.Episode) string {
	parts := []string{e.Short}
	parts = append(parts, e.Summary.Topics...)
	for _, en := range e.Summary.Entities {
		parts = append(parts, strings.TrimSpace(en.Name+" "+en.Details))
	}
	parts = append(parts, e.Summary.Decisions...)
	parts = append(parts, e.Summary.Narrative)
	text := strings.Join(strings.Fields(strings.Join(parts, " \n")), " ")
	if r := []rune(text); len(r) > maxEpisodeTextRunes {
		text = string(r[:maxEpisodeTextRunes])
	}
	return text
}

// EpisodePoint is an episode's point, vectors left to the caller.
func EpisodePoint(c memory.Chat, e memory.Episode) Point {
	return Point{
		Tenant: c.Tenant, UserID: c.UserID, ChatID: c.ID, Agent: c.Agent,
		Seq: e.FromSeq, Content: e.Short, CreatedAt: e.EndedAt,
		Kind: memory.KindEpisode, EpisodeID: e.ID, FromSeq: e.FromSeq, ToSeq: e.ToSeq,
		StartedAt: e.StartedAt, EndedAt: e.EndedAt,
	}
}
