package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/chain"
	"github.com/contextd/contextd/store/internal/sqlbatch"
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
	key := memory.ChatKey{Tenant: rec.Tenant, ChatID: rec.ChatID}
	now := s.now().Truncate(time.Microsecond)
	var added bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if rec.Type == memory.DumpChat {
			var err error
			added, err = loadChatRecord(ctx, tx, *rec.Chat, now)
			return err
		}
		pk, chat, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return fmt.Errorf("%w (its chat record must come first)", err)
		}
		switch rec.Type {
		case memory.DumpMessage:
			added, err = loadMessage(ctx, tx, pk, chat, *rec.Message, now)
		case memory.DumpSummaryRecord:
			added, err = loadSummary(ctx, tx, pk, chat, *rec.Summary)
		case memory.DumpEpisode:
			added, err = loadEpisode(ctx, tx, pk, chat, *rec.Episode)
		case memory.DumpFact:
			added, err = loadFact(ctx, tx, pk, chat, *rec.Fact, now)
		default:
			err = fmt.Errorf("unknown record type %q", rec.Type)
		}
		return err
	})
	if err != nil {
		return false, wrap("load "+rec.Type, err)
	}
	return added, nil
}

func loadChatRecord(ctx context.Context, tx pgx.Tx, c memory.Chat, now time.Time) (bool, error) {
	for _, t := range []string{c.Tenant, c.ID, c.UserID, c.Agent} {
		if err := sqlbatch.CheckText(t); err != nil {
			return false, fmt.Errorf("chat %q: %w: %w", c.ID, err, memory.ErrConflict)
		}
	}
	if c.Agent == "" {
		c.Agent = memory.DefaultAgent
	}
	dirty := 0
	if c.SummaryDirty {
		dirty = 1
	}
	tag, err := tx.Exec(ctx, `INSERT INTO chats (tenant, chat_id, user_id, agent, created_at, updated_at, summary_dirty)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, chat_id) DO NOTHING`,
		c.Tenant, c.ID, c.UserID, c.Agent, orNow(c.CreatedAt, now), orNow(c.UpdatedAt, now), dirty)
	if err != nil || tag.RowsAffected() == 1 {
		return err == nil, err
	}
	var user string
	if err := tx.QueryRow(ctx, `SELECT user_id FROM chats WHERE tenant = $1 AND chat_id = $2`, c.Tenant, c.ID).Scan(&user); err != nil {
		return false, err
	}
	if user != c.UserID {
		return false, fmt.Errorf("chat %q belongs to user %q, the dump says %q: %w", c.ID, user, c.UserID, memory.ErrConflict)
	}
	return false, nil
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t.UTC().Truncate(time.Microsecond)
}

func loadMessage(ctx context.Context, tx pgx.Tx, pk int64, chat memory.Chat, m memory.Message, now time.Time) (bool, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM messages WHERE chat = $1 AND id = $2`, pk, m.ID).Scan(&n); err != nil || n > 0 {
		return false, err
	}
	if m.Seq != chat.LastSeq+1 {
		return false, fmt.Errorf("message %q: seq %d does not follow the chat's last seq %d: %w", m.ID, m.Seq, chat.LastSeq, memory.ErrConflict)
	}
	b, err := sqlbatch.PrepareBatch(memory.AppendRequest{Chat: chat.Key(), Messages: []memory.Message{m}}, now)
	if err != nil {
		return false, fmt.Errorf("%w: %w", err, memory.ErrConflict)
	}
	p := b.Msgs[0]
	var meta *string
	if b.Meta[0] != nil {
		s := string(b.Meta[0])
		meta = &s
	}
	if _, err := tx.Exec(ctx, `INSERT INTO messages (chat, seq, id, role, name, content, created_at, metadata, deleted)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)`, pk, m.Seq, p.ID, string(p.Role), p.Name, p.Content, p.CreatedAt, meta, m.Deleted); err != nil {
		return false, fmt.Errorf("insert message: %w", err)
	}
	_, err = tx.Exec(ctx, `UPDATE chats SET last_seq = $2, summary_pending_since = COALESCE(summary_pending_since, $3) WHERE id = $1`,
		pk, m.Seq, now)
	return err == nil, err
}

func loadSummary(ctx context.Context, tx pgx.Tx, pk int64, chat memory.Chat, rec memory.SummaryRecord) (bool, error) {
	return chain.Load(ctx, chainTx{tx: tx, key: chat.Key(), pk: pk}, chat, rec, sqlbatch.CheckUUID)
}

func loadEpisode(ctx context.Context, tx pgx.Tx, pk int64, chat memory.Chat, e memory.Episode) (bool, error) {
	if err := sqlbatch.CheckUUID(e.ID); err != nil {
		return false, fmt.Errorf("episode: %w: %w", err, memory.ErrConflict)
	}
	var owner int64
	err := tx.QueryRow(ctx, `SELECT chat FROM episodes WHERE id = $1::uuid`, e.ID).Scan(&owner)
	if err == nil {
		if owner != pk {
			return false, fmt.Errorf("episode %q belongs to another chat: %w", e.ID, memory.ErrConflict)
		}
		return false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return false, err
	}
	var lastTo int64
	if err := tx.QueryRow(ctx, `SELECT COALESCE(max(to_seq), 0) FROM episodes WHERE chat = $1`, pk).Scan(&lastTo); err != nil {
		return false, err
	}
	eps := []memory.Episode{e}
	js, err := sqlbatch.PrepareEpisodes(lastTo, chat.LastSeq, eps, e.CreatedAt)
	if err != nil {
		return false, err
	}
	e = eps[0]
	mark := 0
	if e.Rebuild {
		mark = 1
	}
	_, err = tx.Exec(ctx, `INSERT INTO episodes
		(id, chat, tenant, chat_id, from_seq, to_seq, started_at, ended_at, short, summary, model, prompt_version, created_at, rebuild)
		VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14)`,
		e.ID, pk, chat.Tenant, chat.ID, e.FromSeq, e.ToSeq, e.StartedAt, e.EndedAt, e.Short,
		string(js[0]), e.Model, e.PromptVersion, e.CreatedAt, mark)
	return err == nil, err
}

func loadFact(ctx context.Context, tx pgx.Tx, pk int64, chat memory.Chat, f memory.Fact, now time.Time) (bool, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM facts WHERE chat = $1 AND id = $2`, pk, f.ID).Scan(&n); err != nil || n > 0 {
		return false, err
	}
	facts, err := sqlbatch.PrepareFacts(chat.Tenant, chat.ID, f.EpisodeID, chat.LastSeq, []memory.Fact{f}, now)
	if err != nil {
		return false, err
	}
	_, err = insertFacts(ctx, tx, chat.Key(), pk, facts)
	return err == nil, err
}
