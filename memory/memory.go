// Package memory is contextd's domain core: chats, messages, summaries and the
// interfaces the storage backends (store/sqlite, store/postgres) and the
// summarizers implement. It imports no outside dependency (internal/lex, the
// module's word and sentence splitting, is its only import beyond the
// standard library).
package memory

import (
	"errors"
	"slices"
	"strconv"
	"time"
)

// Role is the speaker of a message. Only the four roles below are accepted.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the accepted roles.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleSystem, RoleTool:
		return true
	}
	return false
}

// DefaultTenant is the tenant used when auth is off.
const DefaultTenant = "default"

// DefaultAgent is the agent of a chat whose first append named none.
const DefaultAgent = "default"

// The summary's window, read both by the engine (what a context shows
// verbatim, when the summary lags) and by the summary job (what it leaves
// out, when it runs): memory.summary_recent_turns and
// memory.summary_trigger_turns. Their one home is here, the package both
// import.
const (
	DefaultRecentTurns  = 10
	DefaultTriggerTurns = 10
)

// Message is one stored turn of a chat.
type Message struct {
	// ID is the caller's message id; appends are idempotent on it. When the
	// caller gives none, the store assigns a random one.
	ID string `json:"id"`
	// Seq is the chat's own 1-based, gap-free order, assigned by the store.
	Seq       int64          `json:"seq"`
	Role      Role           `json:"role"`
	Name      string         `json:"name"`
	Content   string         `json:"content"`
	CreatedAt time.Time      `json:"created_at"`
	Metadata  map[string]any `json:"metadata"`
	// Deleted marks a tombstone: a message deleted on its own keeps its
	// seq and role (seqs stay gap-free) and loses content, name and
	// metadata.
	Deleted bool `json:"deleted,omitempty"`
}

// ChatKey names one chat: chat ids are unique within a tenant only.
type ChatKey struct {
	Tenant string
	ChatID string
}

// Chat is a conversation. Its user and agent are fixed by its first append.
type Chat struct {
	Tenant    string    `json:"tenant"`
	ID        string    `json:"chat_id"`
	UserID    string    `json:"user_id"`
	Agent     string    `json:"agent"`
	LastSeq   int64     `json:"last_seq"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// SummaryCursor is covered_to_seq of the head summary record (0: none).
	SummaryCursor int64 `json:"summary_cursor"`
	// SummaryDirty: a message the summary chain may hold was deleted; the
	// chain must be rebuilt (Summaries.WriteSummary, a SummaryRebuild) and is not
	// served until then.
	SummaryDirty bool `json:"summary_dirty"`
	// DirtyMark identifies the chat's latest deletion: positive while the
	// summary is dirty, its negation once the rebuild cleared it, 0 for a
	// chat nothing was ever deleted from. A chat's marks never repeat, so
	// a cache of its turns read under one mark sees every later deletion,
	// by any process. A rebuild clears SummaryDirty only when no
	// message was deleted since the caller read it.
	DirtyMark int64 `json:"-"`
	// HeadID and ProfileVersion are read with the row by Store.Chat (the
	// listings leave them empty): the id of the chat's current summary
	// record ("": none) and the version of its user's profile (0: none).
	// A reader holding a decoded head or profile checks it against them
	// instead of asking again: one read where there were three, and a
	// consistent one.
	HeadID         string `json:"-"`
	ProfileVersion int64  `json:"-"`
}

// Key returns the chat's key.
func (c Chat) Key() ChatKey { return ChatKey{Tenant: c.Tenant, ChatID: c.ID} }

// AppendRequest is one batch of messages for one chat.
type AppendRequest struct {
	Chat ChatKey
	// UserID is the user of a chat this append creates. On an existing
	// chat a non-empty UserID must be the chat's own: otherwise Append
	// stores nothing and returns a *UserConflictError (checked in the
	// append's own transaction, so two first appends naming different
	// users cannot both land).
	UserID string
	Agent  string // used only when the chat is created by this append
	// Messages to store in order. Seq is ignored; ID may be empty.
	Messages []Message
}

// AppendResult reports what an append stored.
type AppendResult struct {
	Chat       Chat
	Appended   int
	Duplicates int
	LastSeq    int64
	// Messages lists, in request order, each message's id and seq (for a
	// duplicate: the seq it already had).
	Messages []MessageRef
	// Created is true when this append created the chat.
	Created bool
}

// MessageRef is a message's id and seq.
type MessageRef struct {
	ID  string `json:"id"`
	Seq int64  `json:"seq"`
}

// Entity is a named thing the summary tracks.
type Entity struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Details string `json:"details"`
}

// Summary is the structured running summary of a chat, covering the turns
// CoveredFromSeq..CoveredToSeq.
type Summary struct {
	Topics          []string  `json:"topics"`
	Entities        []Entity  `json:"entities"`
	ActionsTaken    []string  `json:"actions_taken"`
	Decisions       []string  `json:"decisions"`
	OpenQuestions   []string  `json:"open_questions"`
	UserPreferences []string  `json:"user_preferences"`
	Narrative       string    `json:"narrative"`
	CoveredFromSeq  int64     `json:"covered_from_seq"`
	CoveredToSeq    int64     `json:"covered_to_seq"`
	Stale           bool      `json:"stale"`
	Model           string    `json:"model"`
	PromptVersion   string    `json:"prompt_version"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// Lists are the summary's item lists, in the order a summary shows them:
// topics, actions taken, decisions, open questions, user preferences
// (entities are not plain strings and stay apart). Pointers, so that a
// caller trims, orders or merges them in place. The one place the lists
// are enumerated: a new list is added here.
func (s *Summary) Lists() []*[]string {
	return []*[]string{&s.Topics, &s.ActionsTaken, &s.Decisions, &s.OpenQuestions, &s.UserPreferences}
}

// Normalize replaces nil lists with empty ones so JSON shows [] not null.
func (s *Summary) Normalize() {
	for _, l := range s.Lists() {
		if *l == nil {
			*l = []string{}
		}
	}
	if s.Entities == nil {
		s.Entities = []Entity{}
	}
}

// IsEmpty reports whether the summary holds nothing worth showing.
func (s Summary) IsEmpty() bool {
	if s.Narrative != "" || len(s.Entities) > 0 {
		return false
	}
	for _, l := range s.Lists() {
		if len(*l) > 0 {
			return false
		}
	}
	return true
}

// SummaryRecord is one immutable link of a chat's summary chain. Each
// extension of the summary writes a new record whose parent is the previous
// head: the record holds the whole rewritten summary (covering
// CoveredFromSeq..CoveredToSeq) and FromSeq..ToSeq names the turns that this
// extension added. The chat's current summary is the head record.
type SummaryRecord struct {
	Summary
	ID         string    `json:"id"`
	ParentID   *string   `json:"parent_id"`
	Depth      int       `json:"depth"`
	FromSeq    int64     `json:"from_seq"`
	ToSeq      int64     `json:"to_seq"`
	TokenCount int       `json:"token_count"`
	CreatedAt  time.Time `json:"created_at"`
}

// Copy returns a copy of r whose parent id and lists can change without
// touching r (an empty list stays empty, not nil: it encodes as []). The
// caches of decoded heads hand out copies.
func (r *SummaryRecord) Copy() *SummaryRecord {
	c := *r
	if r.ParentID != nil {
		p := *r.ParentID
		c.ParentID = &p
	}
	c.Entities = slices.Clone(r.Entities)
	for _, l := range c.Lists() {
		*l = slices.Clone(*l)
	}
	return &c
}

// Errors the stores return; match with errors.Is.
var (
	// ErrNotFound: the chat (or message) does not exist for this tenant.
	ErrNotFound = errors.New("not found")
	// ErrCursorMoved: the summary head changed since the caller read it.
	ErrCursorMoved = errors.New("summary cursor moved")
	// ErrConflict: the request contradicts stored state (e.g. the same
	// message id twice in one batch with different content).
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the backend cannot be reached; the caller may retry.
	ErrUnavailable = errors.New("backend unavailable")
	// ErrFull: the store's disk (or its configured cap) is full; nothing
	// of the write was stored. The caller may retry once space is freed.
	ErrFull = errors.New("storage full")
)

// UserConflictError is Append's refusal of a request that names another
// user than the chat's: a chat's user is fixed by its first append. It
// matches ErrConflict.
type UserConflictError struct {
	Owner string // the chat's user ("" when it was created without one)
}

func (e *UserConflictError) Error() string {
	return "conflict: the chat belongs to user " + strconv.Quote(e.Owner)
}

func (e *UserConflictError) Unwrap() error { return ErrConflict }

// CheckUser is the rule every store's Append applies: a non-empty
// requested user must be the chat's.
func CheckUser(chat Chat, requested string) error {
	if requested == "" || requested == chat.UserID {
		return nil
	}
	return &UserConflictError{Owner: chat.UserID}
}
