package memory

import (
	"context"
	"time"
)

// ArrivalBacklog is the durable list of turns whose facts have not been
// drawn yet: each chat keeps a facts cursor, the last seq whose facts were
// drawn on arrival (engine.Arrivals does it in the background, never in
// the append). A turn appended and not yet drawn when the process dies is
// still past the cursor after a restart, and is drawn then. Drawing is
// idempotent (a fact's id is a function of its text and turns), so a crash
// between writing the facts and moving the cursor only draws them again.
type ArrivalBacklog interface {
	// UndrawnChats lists up to limit chats holding turns past their facts
	// cursor, least recently updated first, each with its cursor.
	UndrawnChats(ctx context.Context, limit int) ([]Undrawn, error)
	// MarkDrawn moves each mark's chat's facts cursor forward to ToSeq
	// (never back, never past the chat's last_seq), in one write. A chat
	// that does not exist, or is another chat now (erased and created
	// again under its id: Created differs), is skipped.
	MarkDrawn(ctx context.Context, marks []DrawnMark) error
}

// Undrawn is a chat with turns past its facts cursor.
type Undrawn struct {
	Chat Chat
	// Cursor is the last seq whose facts were drawn.
	Cursor int64
}

// DrawnMark moves one chat's facts cursor.
type DrawnMark struct {
	Chat ChatKey
	// Created is the chat's created_at as its turns were read (zero: not
	// checked).
	Created time.Time
	ToSeq   int64
}
