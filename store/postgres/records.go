package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
	"github.com/contextd/contextd/store/internal/sqlbatch"
)

var _ records.Tx = chainTx{}

func (c chainTx) LastEpisodeTo(ctx context.Context) (int64, error) {
	var lastTo int64
	err := c.tx.QueryRow(ctx, `SELECT COALESCE(max(to_seq), 0) FROM episodes WHERE chat = $1`, c.pk).Scan(&lastTo)
	return lastTo, err
}

func (c chainTx) InsertEpisode(ctx context.Context, e memory.Episode, js []byte) error {
	_, err := c.tx.Exec(ctx, `INSERT INTO episodes
		(id, chat, tenant, chat_id, from_seq, to_seq, started_at, ended_at, short, summary, model, prompt_version, created_at, rebuild)
		VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14)`,
		e.ID, c.pk, c.key.Tenant, c.key.ChatID, e.FromSeq, e.ToSeq, e.StartedAt, e.EndedAt, e.Short,
		string(js), e.Model, e.PromptVersion, e.CreatedAt, e.RebuildMark)
	return err
}

func (c chainTx) InsertFacts(ctx context.Context, facts []memory.Fact) error {
	_, err := insertFacts(ctx, c.tx, c.key, c.pk, facts)
	return err
}

func (c chainTx) EpisodeOwner(ctx context.Context, id string) (bool, bool, error) {
	var owner int64
	err := c.tx.QueryRow(ctx, `SELECT chat FROM episodes WHERE id = $1::uuid`, id).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	return err == nil, owner == c.pk, err
}

func (c chainTx) FactExists(ctx context.Context, id string) (bool, error) {
	var n int
	err := c.tx.QueryRow(ctx, `SELECT count(*) FROM facts WHERE chat = $1 AND id = $2`, c.pk, id).Scan(&n)
	return n > 0, err
}

func (c chainTx) MessageExists(ctx context.Context, id string) (bool, error) {
	var n int
	err := c.tx.QueryRow(ctx, `SELECT count(*) FROM messages WHERE chat = $1 AND id = $2`, c.pk, id).Scan(&n)
	return n > 0, err
}

func (c chainTx) InsertMessage(ctx context.Context, seq int64, m memory.Message, meta []byte, now time.Time) error {
	var md *string
	if meta != nil {
		s := string(meta)
		md = &s
	}
	if _, err := c.tx.Exec(ctx, `INSERT INTO messages (chat, seq, id, role, name, content, created_at, metadata, deleted)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)`, c.pk, seq, m.ID, string(m.Role), m.Name, m.Content, m.CreatedAt, md, m.Deleted); err != nil {
		return fmt.Errorf("insert message: %w", err)
	}
	_, err := c.tx.Exec(ctx, `UPDATE chats SET last_seq = $2, summary_pending_since = COALESCE(summary_pending_since, $3) WHERE id = $1`,
		c.pk, seq, now)
	return err
}

func (c chainTx) CheckID(id string) error { return sqlbatch.CheckUUID(id) }
