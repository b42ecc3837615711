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

var _ records.DeletionTx = chainTx{}

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

func (c chainTx) UpdateEpisode(ctx context.Context, ep memory.Episode, js []byte) (bool, error) {
	tag, err := c.tx.Exec(ctx, `UPDATE episodes SET short = $1, summary = $2::jsonb, model = $3, prompt_version = $4, indexed = false,
		rebuild = CASE WHEN rebuild = $5 THEN 0 ELSE rebuild END WHERE chat = $6 AND id::text = $7`,
		ep.Short, string(js), ep.Model, ep.PromptVersion, ep.RebuildMark, c.pk, ep.ID)
	return err == nil && tag.RowsAffected() > 0, err
}

func (c chainTx) DeleteEpisodeFacts(ctx context.Context, episodeID string) (map[string]string, error) {
	rows, err := c.tx.Query(ctx, `DELETE FROM facts WHERE chat = $1 AND episode_id = $2
		RETURNING id, COALESCE(superseded_by, '')`, c.pk, episodeID)
	if err != nil {
		return nil, err
	}
	old := map[string]string{}
	var id, sup string
	_, err = pgx.ForEachRow(rows, []any{&id, &sup}, func() error {
		old[id] = sup
		return nil
	})
	return old, err
}

func (c chainTx) Unpoint(ctx context.Context, gone []string) error {
	return unpoint(ctx, c.tx, c.pk, gone)
}

func (c chainTx) Tombstone(ctx context.Context, id string) (memory.Message, bool, error) {
	var (
		m    memory.Message
		role string
	)
	err := c.tx.QueryRow(ctx, `UPDATE messages SET content = '', name = '', metadata = NULL, deleted = true, indexed = false
		WHERE chat = $1 AND id = $2 AND NOT deleted RETURNING seq, role, created_at`, c.pk, id).Scan(&m.Seq, &role, &m.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, false, nil
	}
	m.Role, m.CreatedAt = memory.Role(role), m.CreatedAt.UTC()
	return m, err == nil, err
}

func (c chainTx) DeleteCitingFacts(ctx context.Context, seq int64) ([]string, error) {
	rows, err := c.tx.Query(ctx, `DELETE FROM facts WHERE chat = $1 AND $2 = ANY(seqs) RETURNING id`, c.pk, seq)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (c chainTx) MarkEpisode(ctx context.Context, seq int64) error {
	_, err := c.tx.Exec(ctx, `UPDATE episodes SET rebuild = rebuild + 1, indexed = false
		WHERE chat = $1 AND from_seq <= $2 AND to_seq >= $2`, c.pk, seq)
	return err
}

func (c chainTx) RecordForget(ctx context.Context, seq int64, now time.Time) error {
	_, err := c.tx.Exec(ctx, `INSERT INTO forgets (chat, seq, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (chat, seq) DO NOTHING`, c.pk, seq, now)
	return err
}
