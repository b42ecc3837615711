package memory

import "time"

// Episode is a closed stretch of a chat (cut at a topic shift, a time gap or
// the size cap) with its own summaries. Closed episodes own contiguous,
// non-overlapping seq ranges from seq 1 and are never re-segmented.
type Episode struct {
	ID      string `json:"id"`
	ChatID  string `json:"chat_id"`
	FromSeq int64  `json:"from_seq"`
	ToSeq   int64  `json:"to_seq"`
	// Turns is ToSeq-FromSeq+1.
	Turns     int       `json:"turns"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	// Short is one or two sentences; Summary is the long, structured one.
	Short         string    `json:"short"`
	Summary       Summary   `json:"summary"`
	Model         string    `json:"model"`
	PromptVersion string    `json:"prompt_version"`
	CreatedAt     time.Time `json:"created_at"`
	// Rebuild: a turn of the episode was deleted; its summaries and facts
	// must be rebuilt (MessageDeleter.RebuildEpisode) and are not served
	// until then.
	Rebuild bool `json:"rebuild,omitempty"`
	// RebuildMark identifies the deletion that marked the episode (0: none);
	// RebuildEpisode clears Rebuild only when no turn of the episode was
	// deleted since the caller read it.
	RebuildMark int64 `json:"-"`
	// Facts are the facts drawn from the episode's turns; CloseEpisodes
	// stores them with the episode, in the same transaction. Read them
	// back with FactStore.Facts.
	Facts []Fact `json:"-"`
}

// Kinds of retrievable items (search "kinds", index payload "kind").
const (
	KindTurn    = "turn"
	KindEpisode = "episode"
)
