package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
)

// Fact is one atomic, dated statement drawn from a chat (by the LLM when
// one is configured, extractively otherwise) with the turns it came from.
// Facts are derived state: written with the episode whose turns they cite,
// rebuilt when those turns change, erased with their chat, user or turn.
type Fact struct {
	ID     string  `json:"id"`
	ChatID string  `json:"chat_id"`
	Text   string  `json:"text"`
	Seqs   []int64 `json:"seqs"` // source turns, ascending, non-empty
	// ValidAt is the time of the newest source turn.
	ValidAt time.Time `json:"valid_at"`
	Kind    string    `json:"kind"`   // FactPreference, FactPlan, ...
	Source  string    `json:"source"` // FactSourceLLM or FactSourceExtractive
	// SupersededBy is the id of a newer fact that updates this one ("" =
	// current), or FactAnswered for an open question a later turn
	// answered.
	SupersededBy string `json:"superseded_by"`
	// EpisodeID is the episode whose summariser call produced the fact.
	EpisodeID string    `json:"episode_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// MarshalJSON writes superseded_by as null for a current fact, as the
// contract has it ("<id>" | null): a client testing for null must not take
// every fact for superseded. Reading back, "" and null are the same.
func (f Fact) MarshalJSON() ([]byte, error) {
	var by *string
	if f.SupersededBy != "" {
		by = &f.SupersededBy
	}
	return json.Marshal(struct { // Fact's fields, in its order
		ID           string    `json:"id"`
		ChatID       string    `json:"chat_id"`
		Text         string    `json:"text"`
		Seqs         []int64   `json:"seqs"`
		ValidAt      time.Time `json:"valid_at"`
		Kind         string    `json:"kind"`
		Source       string    `json:"source"`
		SupersededBy *string   `json:"superseded_by"`
		EpisodeID    string    `json:"episode_id,omitempty"`
		CreatedAt    time.Time `json:"created_at"`
	}{f.ID, f.ChatID, f.Text, f.Seqs, f.ValidAt, f.Kind, f.Source, by, f.EpisodeID, f.CreatedAt})
}

// Fact kinds.
const (
	FactPreference = "preference"
	FactPlan       = "plan"
	FactDecision   = "decision"
	FactEvent      = "event"
	FactAttribute  = "attribute"
	FactOther      = "other"
)

// FactAnswered is the superseded_by of an open question's fact ("Unanswered
// question from …") once a later turn by someone else answers it: no newer
// fact states the answer, the turn does.
const FactAnswered = "answered"

// Fact sources.
const (
	FactSourceLLM        = "llm"
	FactSourceExtractive = "extractive"
)

// KindFact is the retrievable kind of a fact (search "kinds", index
// payload "kind").
const KindFact = "fact"

// FirstSeq is the fact's first source seq (its place in seq order).
func (f Fact) FirstSeq() int64 {
	if len(f.Seqs) == 0 {
		return 0
	}
	return f.Seqs[0]
}

// FactID is a fact's deterministic id: the same fact of the same chat gets
// the same id, so re-deriving it is idempotent.
func FactID(tenant, chatID string, seqs []int64, text string) string {
	h := sha256.New()
	for _, s := range []string{tenant, chatID, text} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, s := range seqs {
		h.Write([]byte(strconv.FormatInt(s, 10)))
		h.Write([]byte{0})
	}
	return "f-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// FactQuery selects a chat's facts (FactStore.Facts): a page in seq
// order, or the facts with given ids.
type FactQuery struct {
	AfterSeq          int64
	Limit             int
	IncludeSuperseded bool
	// ByID selects the facts with IDs instead of a page.
	ByID bool
	IDs  []string
}

// FactsByID is the query for the chat's facts with these ids.
func FactsByID(ids []string) FactQuery { return FactQuery{ByID: true, IDs: ids} }

// FactStore keeps a chat's facts. Facts are written together with the
// episode they came from (CloseEpisodes stores each Episode.Facts in the
// same transaction: ChatID and EpisodeID set, ID kept or computed with
// FactID when empty, Seqs sorted and de-duplicated, a fact whose id the
// chat holds already ignored, a fact citing a deleted turn dropped; a fact
// without text or seqs, or citing a seq past last_seq, is ErrConflict);
// implementations: store/sqlite, store/postgres; both pass
// store/storetest. The indexer reads and marks them through IndexBacklog
// (IndexFacts). DeleteChat (and so erasing a user) erases a chat's
// facts; MessageDeleter.DeleteMessage those citing the turn. Every method
// returns ErrNotFound for an unknown chat.
type FactStore interface {
	// Facts returns the chat's facts q selects, ordered by (first seq,
	// id). A page (q.ByID false): up to q.Limit facts whose first seq is >
	// q.AfterSeq (limit <= 0: all); it never splits the facts of one first
	// seq: it may hold more than the limit, so that the next page starts
	// after the last fact's first seq. Superseded facts are left out
	// unless q.IncludeSuperseded. By id (q.ByID): the facts with q.IDs
	// (those that exist), superseded or not.
	Facts(ctx context.Context, key ChatKey, q FactQuery) ([]Fact, error)
	// AddFacts stores facts drawn from turns that no closed episode owns
	// yet (extracted as the turns arrive), as CloseEpisodes stores an
	// episode's: a fact whose id the chat holds is left as it is, a fact
	// citing a deleted turn is dropped; all or nothing (ErrConflict for a
	// fact with no text, no seqs or a seq past last_seq). It returns the
	// facts now stored.
	AddFacts(ctx context.Context, key ChatKey, facts []Fact) ([]Fact, error)
	// SupersedeFacts sets superseded_by: for each old id, the id of the
	// newer fact that updates it. Unknown old ids are ignored. A fact whose
	// superseded_by changes is marked unindexed (the index keeps whether a
	// fact is current).
	SupersedeFacts(ctx context.Context, key ChatKey, oldToNew map[string]string) error
}
