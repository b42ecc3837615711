// Package sqlbatch prepares an append for the SQL stores (store/sqlite,
// store/postgres): preparing it is shared so that all of them validate,
// assign ids and de-duplicate a batch exactly the same way.
package sqlbatch

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

// Batch is one append's messages after validation, id assignment and
// de-duplication within the request.
type Batch struct {
	// msgs are the request's messages with distinct ids, in request order,
	// with ID and CreatedAt filled in; meta holds their JSON metadata.
	Msgs []memory.Message
	Meta [][]byte
	// of maps each request message to the index in msgs of the message
	// carrying its id.
	Of []int
	// Fresh: every id was assigned here (random, 122 bits), so none can be
	// in the chat already and a store may skip looking for duplicates.
	Fresh bool
}

// PrepareBatch validates req and de-duplicates it. A repeated id within the
// batch is a duplicate when it repeats the same turn and memory.ErrConflict when
// role, name or content differ.
func PrepareBatch(req memory.AppendRequest, now time.Time) (*Batch, error) {
	if req.Chat.Tenant == "" || req.Chat.ChatID == "" {
		return nil, errors.New("append: empty tenant or chat id")
	}
	for _, s := range []string{req.Chat.Tenant, req.Chat.ChatID, req.UserID, req.Agent} {
		if err := CheckText(s); err != nil {
			return nil, fmt.Errorf("append: chat key, user or agent: %w", err)
		}
	}
	b := &Batch{Of: make([]int, len(req.Messages)), Fresh: true}
	byID := make(map[string]int, len(req.Messages))
	for i, m := range req.Messages {
		if !m.Role.Valid() {
			return nil, fmt.Errorf("append: message %d: invalid role %q", i, m.Role)
		}
		for _, s := range []string{m.ID, m.Name, m.Content} {
			if err := CheckText(s); err != nil {
				return nil, fmt.Errorf("append: message %d: %w", i, err)
			}
		}
		if m.ID == "" {
			m.ID = NewID()
		} else {
			b.Fresh = false
		}
		if j, ok := byID[m.ID]; ok {
			p := b.Msgs[j]
			if p.Role != m.Role || p.Name != m.Name || p.Content != m.Content {
				return nil, fmt.Errorf("append: message %d repeats id %q with different content: %w", i, m.ID, memory.ErrConflict)
			}
			b.Of[i] = j
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
			if HasEscapedNUL(meta) {
				return nil, fmt.Errorf("append: message %d: metadata contains a NUL character", i)
			}
		}
		m.Seq = 0
		byID[m.ID] = len(b.Msgs)
		b.Of[i] = len(b.Msgs)
		b.Msgs = append(b.Msgs, m)
		b.Meta = append(b.Meta, meta)
	}
	return b, nil
}

// refs lists each request message's id and seq, given the seq of every
// distinct message.
func (b *Batch) Refs(seqs []int64) []memory.MessageRef {
	out := make([]memory.MessageRef, len(b.Of))
	for i, j := range b.Of {
		out[i] = memory.MessageRef{ID: b.Msgs[j].ID, Seq: seqs[j]}
	}
	return out
}

// CheckText rejects what PostgreSQL text cannot hold, so that both stores
// accept exactly the same input.
func CheckText(s string) error {
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
func HasEscapedNUL(js []byte) bool {
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
func DecodeMeta(js []byte) (map[string]any, error) {
	if js == nil {
		return nil, nil
	}
	var m map[string]any
	// Numbers as json.Number: "stored and returned as it is" holds for
	// integers past 2^53 (ids of other systems), which float64 rounds.
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode metadata: %w", err)
	}
	return m, nil
}

// NewID returns a random RFC 4122 version 4 UUID, the id of a message whose
// caller gave none and of a summary record.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("memory: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// CheckUUID rejects what is not a UUID in its text form, which PostgreSQL
// keeps episode and summary record ids as.
func CheckUUID(s string) error {
	if len(s) != 36 {
		return fmt.Errorf("id %q is not a UUID", truncate(s))
	}
	for i, c := range []byte(s) {
		dash := i == 8 || i == 13 || i == 18 || i == 23
		hex := c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
		if dash != (c == '-') || !dash && !hex {
			return fmt.Errorf("id %q is not a UUID", truncate(s))
		}
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return strings.ToValidUTF8(s[:40], "?") + "…"
	}
	return s
}
