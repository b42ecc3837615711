package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
)

var _ memory.Dumper = (*Store)(nil)

// Dump emits the scope's records; see memory.Dumper.
func (s *Store) Dump(ctx context.Context, scope memory.DumpScope, emit func(memory.DumpRecord) error) error {
	if err := memory.DumpFrom(ctx, s, scope, emit); err != nil {
		return fmt.Errorf("sqlite: dump: %w", err)
	}
	return nil
}

// Load stores one dump record as it is, idempotently; see memory.Dumper.
func (s *Store) Load(ctx context.Context, rec memory.DumpRecord) (bool, error) {
	if rec.Type == memory.DumpProfile {
		added, err := memory.LoadProfile(ctx, s, rec.Tenant, *rec.Profile)
		if err != nil {
			return false, fmt.Errorf("sqlite: load profile: %w", err)
		}
		return added, nil
	}
	now := s.now().Truncate(time.Microsecond)
	var added bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		added, err = records.Load(ctx, loadTx{s: s, tx: tx}, rec, now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: load %s: %w", rec.Type, err)
	}
	return added, nil
}

// loadTx is SQLite's raw operations for loading a dump (records.LoadTx).
type loadTx struct {
	s  *Store
	tx *sql.Tx
}

func (l loadTx) InsertChat(ctx context.Context, c memory.Chat) (bool, string, error) {
	var user string
	err := l.tx.QueryRowContext(ctx, `SELECT user_id FROM chats WHERE tenant = ? AND chat_id = ?`, c.Tenant, c.ID).Scan(&user)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return false, user, err
	}
	dirty := 0
	if c.SummaryDirty {
		dirty = 1
	}
	_, err = l.tx.ExecContext(ctx, `INSERT INTO chats (tenant, chat_id, user_id, agent, created_at, updated_at, summary_dirty)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, c.Tenant, c.ID, c.UserID, c.Agent, micros(c.CreatedAt), micros(c.UpdatedAt), dirty)
	return err == nil, "", err
}

func (l loadTx) Chat(ctx context.Context, key memory.ChatKey) (records.Tx, memory.Chat, error) {
	pk, chat, err := loadChat(ctx, l.tx.StmtContext(ctx, l.s.ws.chat), key)
	if err != nil {
		return nil, chat, err
	}
	return &chainTx{s: l.s, tx: l.tx, pk: pk, chat: chat}, chat, nil
}

func nullable(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
