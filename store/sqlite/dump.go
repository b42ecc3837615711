package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/chain"
	"github.com/contextd/contextd/store/internal/sqlbatch"
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
	key := memory.ChatKey{Tenant: rec.Tenant, ChatID: rec.ChatID}
	now := s.now().Truncate(time.Microsecond)
	var added bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		if rec.Type == memory.DumpChat {
			var err error
			added, err = s.loadChat(ctx, tx, *rec.Chat, now)
			return err
		}
		pk, chat, err := loadChat(ctx, tx.StmtContext(ctx, s.ws.chat), key)
		if err != nil {
			return fmt.Errorf("%w (its chat record must come first)", err)
		}
		switch rec.Type {
		case memory.DumpMessage:
			added, err = s.loadMessage(ctx, tx, pk, chat, *rec.Message, now)
		case memory.DumpSummaryRecord:
			added, err = s.loadSummary(ctx, tx, pk, chat, *rec.Summary)
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
		return false, fmt.Errorf("sqlite: load %s: %w", rec.Type, err)
	}
	return added, nil
}

func (s *Store) loadChat(ctx context.Context, tx *sql.Tx, c memory.Chat, now time.Time) (bool, error) {
	var user string
	err := tx.QueryRowContext(ctx, `SELECT user_id FROM chats WHERE tenant = ? AND chat_id = ?`, c.Tenant, c.ID).Scan(&user)
	if err == nil {
		if user != c.UserID {
			return false, fmt.Errorf("chat %q belongs to user %q, the dump says %q: %w", c.ID, user, c.UserID, memory.ErrConflict)
		}
		return false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	for _, t := range []string{c.Tenant, c.ID, c.UserID, c.Agent} {
		if err := sqlbatch.CheckText(t); err != nil {
			return false, fmt.Errorf("chat %q: %w: %w", c.ID, err, memory.ErrConflict)
		}
	}
	if c.Agent == "" {
		c.Agent = memory.DefaultAgent
	}
	created, updated := orNow(c.CreatedAt, now), orNow(c.UpdatedAt, now)
	dirty := 0
	if c.SummaryDirty {
		dirty = 1
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO chats (tenant, chat_id, user_id, agent, created_at, updated_at, summary_dirty)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, c.Tenant, c.ID, c.UserID, c.Agent, micros(created), micros(updated), dirty)
	return err == nil, err
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t.UTC().Truncate(time.Microsecond)
}

func (s *Store) loadMessage(ctx context.Context, tx *sql.Tx, pk int64, chat memory.Chat, m memory.Message, now time.Time) (bool, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `SELECT seq FROM messages WHERE chat = ? AND id = ?`, pk, m.ID).Scan(&seq)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
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
	var meta any
	if b.Meta[0] != nil {
		meta = string(b.Meta[0])
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (chat, seq, id, role, name, content, created_at, metadata, deleted)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, pk, m.Seq, p.ID, string(p.Role), p.Name, p.Content, micros(p.CreatedAt), meta, m.Deleted); err != nil {
		return false, fmt.Errorf("insert message: %w", err)
	}
	_, err = tx.StmtContext(ctx, s.ws.updateChat).ExecContext(ctx, m.Seq, micros(chat.UpdatedAt), micros(now), pk)
	return err == nil, err
}

func (s *Store) loadSummary(ctx context.Context, tx *sql.Tx, pk int64, chat memory.Chat, rec memory.SummaryRecord) (bool, error) {
	return chain.Load(ctx, &chainTx{s: s, tx: tx, pk: pk}, chat, rec, sqlbatch.CheckText)
}

func nullable(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func loadEpisode(ctx context.Context, tx *sql.Tx, pk int64, chat memory.Chat, e memory.Episode) (bool, error) {
	var owner int64
	err := tx.QueryRowContext(ctx, `SELECT chat FROM episodes WHERE id = ?`, e.ID).Scan(&owner)
	if err == nil {
		if owner != pk {
			return false, fmt.Errorf("episode %q belongs to another chat: %w", e.ID, memory.ErrConflict)
		}
		return false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	var lastTo int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(to_seq), 0) FROM episodes WHERE chat = ?`, pk).Scan(&lastTo); err != nil {
		return false, err
	}
	created := e.CreatedAt
	eps := []memory.Episode{e}
	js, err := sqlbatch.PrepareEpisodes(lastTo, chat.LastSeq, eps, created)
	if err != nil {
		return false, err
	}
	e = eps[0]
	mark := 0
	if e.Rebuild {
		mark = 1
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO episodes (`+episodeCols+`, chat) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.FromSeq, e.ToSeq, micros(e.StartedAt), micros(e.EndedAt), e.Short, string(js[0]),
		e.Model, e.PromptVersion, micros(e.CreatedAt), mark, pk)
	return err == nil, err
}

func loadFact(ctx context.Context, tx *sql.Tx, pk int64, chat memory.Chat, f memory.Fact, now time.Time) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM facts WHERE chat = ? AND id = ?`, pk, f.ID).Scan(&n); err != nil || n > 0 {
		return false, err
	}
	facts, err := sqlbatch.PrepareFacts(chat.Tenant, chat.ID, f.EpisodeID, chat.LastSeq, []memory.Fact{f}, now)
	if err != nil {
		return false, err
	}
	_, err = insertFacts(ctx, tx, pk, facts)
	return err == nil, err
}
