package postgres

// This file is kept identical (but for the package clause) to
// memory/sqlite/batch.go: both stores must prepare an append the same way.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
	"github.com/google/uuid"
)

// batch is one append's messages after validation, id assignment and
// de-duplication within the request.
type batch struct {
	// msgs are the request's messages with distinct ids, in request order,
	// with ID and CreatedAt filled in; meta holds their JSON metadata.
	msgs []memory.Message
	meta [][]byte
	// of maps each request message to the index in msgs of the message
	// carrying its id.
	of []int
}

// prepareBatch validates req and de-duplicates it. A repeated id within the
// batch is a duplicate when it repeats the same turn and ErrConflict when
// role, name or content differ.
func prepareBatch(req memory.AppendRequest, now time.Time) (*batch, error) {
	if req.Chat.Tenant == "" || req.Chat.ChatID == "" {
		return nil, errors.New("append: empty tenant or chat id")
	}
	for _, s := range []string{req.Chat.Tenant, req.Chat.ChatID, req.UserID, req.Agent} {
		if err := checkText(s); err != nil {
			return nil, fmt.Errorf("append: chat key, user or agent: %w", err)
		}
	}
	b := &batch{of: make([]int, len(req.Messages))}
	byID := make(map[string]int, len(req.Messages))
	for i, m := range req.Messages {
		if !m.Role.Valid() {
			return nil, fmt.Errorf("append: message %d: invalid role %q", i, m.Role)
		}
		for _, s := range []string{m.ID, m.Name, m.Content} {
			if err := checkText(s); err != nil {
				return nil, fmt.Errorf("append: message %d: %w", i, err)
			}
		}
		if m.ID == "" {
			m.ID = uuid.NewString()
		}
		if j, ok := byID[m.ID]; ok {
			p := b.msgs[j]
			if p.Role != m.Role || p.Name != m.Name || p.Content != m.Content {
				return nil, fmt.Errorf("append: message %d repeats id %q with different content: %w", i, m.ID, memory.ErrConflict)
			}
			b.of[i] = j
			continue
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		// Both stores keep microseconds (Postgres timestamptz precision).
		m.CreatedAt = m.CreatedAt.UTC().Truncate(time.Microsecond)
		var meta []byte
		if m.Metadata != nil {
			var err error
			if meta, err = json.Marshal(m.Metadata); err != nil {
				return nil, fmt.Errorf("append: message %d: metadata: %w", i, err)
			}
			if hasEscapedNUL(meta) {
				return nil, fmt.Errorf("append: message %d: metadata contains a NUL character", i)
			}
		}
		m.Seq = 0
		byID[m.ID] = len(b.msgs)
		b.of[i] = len(b.msgs)
		b.msgs = append(b.msgs, m)
		b.meta = append(b.meta, meta)
	}
	return b, nil
}

// refs lists each request message's id and seq, given the seq of every
// distinct message.
func (b *batch) refs(seqs []int64) []memory.MessageRef {
	out := make([]memory.MessageRef, len(b.of))
	for i, j := range b.of {
		out[i] = memory.MessageRef{ID: b.msgs[j].ID, Seq: seqs[j]}
	}
	return out
}

// checkText rejects what PostgreSQL text cannot hold, so that both stores
// accept exactly the same input.
func checkText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("text is not valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return errors.New("text contains a NUL character")
	}
	return nil
}

// hasEscapedNUL reports whether JSON text holds the escape \u0000, which
// PostgreSQL jsonb rejects.
func hasEscapedNUL(js []byte) bool {
	for i := 0; i < len(js); i++ {
		if js[i] != '\\' {
			continue
		}
		if i+5 < len(js) && js[i+1] == 'u' && string(js[i+2:i+6]) == "0000" {
			return true
		}
		i++ // skip the escaped character
	}
	return false
}

// decodeMeta reverses the metadata encoding (nil stays nil).
func decodeMeta(js []byte) (map[string]any, error) {
	if js == nil {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, fmt.Errorf("decode metadata: %w", err)
	}
	return m, nil
}
