package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
)

var _ memory.Dumper = (*Store)(nil)

// Dump emits the scope's records; see memory.Dumper.
func (s *Store) Dump(ctx context.Context, scope memory.DumpScope, emit func(memory.DumpRecord) error) error {
	return wrap("dump", memory.DumpFrom(ctx, s, scope, emit))
}

// Load stores one dump record as it is, idempotently, in one transaction
// holding the chat's row lock; see memory.Dumper.
func (s *Store) Load(ctx context.Context, rec memory.DumpRecord) (bool, error) {
	if rec.Type == memory.DumpProfile {
		added, err := memory.LoadProfile(ctx, s, rec.Tenant, *rec.Profile)
		return added, wrap("load profile", err)
	}
	now := s.now().Truncate(time.Microsecond)
	var added bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		added, err = records.Load(ctx, loadTx{tx: tx}, rec, now)
		return err
	})
	if err != nil {
		return false, wrap("load "+rec.Type, err)
	}
	return added, nil
}

// loadTx is PostgreSQL's raw operations for loading a dump
// (records.LoadTx).
type loadTx struct{ tx pgx.Tx }

func (l loadTx) InsertChat(ctx context.Context, c memory.Chat) (bool, string, error) {
	dirty := 0
	if c.SummaryDirty {
		dirty = 1
	}
	tag, err := l.tx.Exec(ctx, `INSERT INTO chats (tenant, chat_id, user_id, agent, created_at, updated_at, summary_dirty)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, chat_id) DO NOTHING`,
		c.Tenant, c.ID, c.UserID, c.Agent, c.CreatedAt, c.UpdatedAt, dirty)
	if err != nil || tag.RowsAffected() == 1 {
		return err == nil, "", err
	}
	var user string
	err = l.tx.QueryRow(ctx, `SELECT user_id FROM chats WHERE tenant = $1 AND chat_id = $2`, c.Tenant, c.ID).Scan(&user)
	return false, user, err
}

func (l loadTx) Chat(ctx context.Context, key memory.ChatKey) (records.Tx, memory.Chat, error) {
	pk, chat, err := loadChat(ctx, l.tx, key, true)
	if err != nil {
		return nil, chat, err
	}
	return chainTx{tx: l.tx, key: key, pk: pk}, chat, nil
}
