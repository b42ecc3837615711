package engine

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

// maxMessages is how many messages one request may hold.
func (l Limits) maxMessages() int {
	if n := l.MaxMessagesPerRequest; n > 0 {
		return n
	}
	return DefaultMaxMessagesPerRequest
}

// maxMessageBytes is how long one message may be.
func (l Limits) maxMessageBytes() int {
	if n := l.MaxMessageBytes; n > 0 {
		return n
	}
	return DefaultMaxMessageBytes
}

// validateMessages turns client messages into store messages, rejecting the
// whole batch on the first bad one so nothing is half-stored.
func (l Limits) validateMessages(field string, in []InMessage) ([]memory.Message, error) {
	if len(in) > l.maxMessages() {
		return nil, tooLarge(field, "holds %d messages; at most %d per request", len(in), l.maxMessages())
	}
	out := make([]memory.Message, 0, len(in))
	byID := map[string]int{}
	for i, m := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		role := memory.Role(m.Role)
		if m.Role == "" {
			return nil, invalid(f+".role", "missing_field", "is required (user, assistant, system or tool)")
		}
		if !role.Valid() {
			return nil, invalid(f+".role", "invalid_role", "%q is not one of user, assistant, system, tool", truncateForError(m.Role))
		}
		if !utf8.ValidString(m.Content) {
			return nil, invalid(f+".content", "invalid_utf8", "is not valid UTF-8")
		}
		if strings.TrimSpace(m.Content) == "" {
			return nil, invalid(f+".content", "empty_content", "is empty")
		}
		if strings.ContainsRune(m.Content, 0) {
			// No SQL text type stores NUL; refuse it rather than alter it.
			return nil, invalid(f+".content", "invalid_content", "contains a NUL character")
		}
		if len(m.Content) > l.maxMessageBytes() {
			return nil, tooLarge(f+".content", "is %d bytes; at most %d per message (server.max_message_bytes)", len(m.Content), l.maxMessageBytes())
		}
		if m.ID != "" {
			if err := ValidateID(f+".id", m.ID, false); err != nil {
				return nil, err
			}
			// A retry repeats a message whole; the same id on another
			// message is the caller's bug, which no retry mends.
			if j, ok := byID[m.ID]; ok && (in[j].Role != m.Role || in[j].Name != m.Name || in[j].Content != m.Content) {
				return nil, invalid(f+".id", "invalid_value", "%q is also the id of %s[%d], with another role, name or content", truncateForError(m.ID), field, j)
			}
			byID[m.ID] = i
		}
		if err := ValidateID(f+".name", m.Name, false); err != nil {
			return nil, err
		}
		if hasNUL(m.Metadata) { // as in content: no SQL text type stores it
			return nil, invalid(f+".metadata", "invalid_content", "contains a NUL character")
		}
		msg := memory.Message{ID: m.ID, Role: role, Name: m.Name, Content: m.Content, Metadata: m.Metadata}
		if m.CreatedAt != nil {
			if m.CreatedAt.Before(time.Unix(0, 0)) { // the zero time would read as unset: now
				return nil, invalid(f+".created_at", "invalid_time", "%s is before 1970-01-01; leave it out for the time of the append", m.CreatedAt.UTC().Format(time.RFC3339))
			}
			msg.CreatedAt = m.CreatedAt.UTC()
		}
		out = append(out, msg)
	}
	return out, nil
}
