package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
	"github.com/contextd/contextd/store/internal/sqlbatch"
)

var _ records.DeletionTx = (*chainTx)(nil)

func (c *chainTx) LastEpisodeTo(ctx context.Context) (int64, error) {
	var lastTo int64
	err := c.tx.QueryRowContext(ctx, `SELECT COALESCE(max(to_seq), 0) FROM episodes WHERE chat = ?`, c.pk).Scan(&lastTo)
	return lastTo, err
}

func (c *chainTx) InsertEpisode(ctx context.Context, e memory.Episode, js []byte) error {
	_, err := c.tx.ExecContext(ctx, `INSERT INTO episodes (`+episodeCols+`, chat) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.FromSeq, e.ToSeq, micros(e.StartedAt), micros(e.EndedAt), e.Short, string(js),
		e.Model, e.PromptVersion, micros(e.CreatedAt), e.RebuildMark, c.pk)
	return err
}

func (c *chainTx) InsertFacts(ctx context.Context, facts []memory.Fact) error {
	_, err := insertFacts(ctx, c.tx, c.pk, facts)
	return err
}

func (c *chainTx) EpisodeOwner(ctx context.Context, id string) (bool, bool, error) {
	var owner int64
	err := c.tx.QueryRowContext(ctx, `SELECT chat FROM episodes WHERE id = ?`, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	return err == nil, owner == c.pk, err
}

func (c *chainTx) FactExists(ctx context.Context, id string) (bool, error) {
	var n int
	err := c.tx.QueryRowContext(ctx, `SELECT count(*) FROM facts WHERE chat = ? AND id = ?`, c.pk, id).Scan(&n)
	return n > 0, err
}

func (c *chainTx) MessageExists(ctx context.Context, id string) (bool, error) {
	var n int
	err := c.tx.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE chat = ? AND id = ?`, c.pk, id).Scan(&n)
	return n > 0, err
}

func (c *chainTx) InsertMessage(ctx context.Context, seq int64, m memory.Message, meta []byte, now time.Time) error {
	var md any
	if meta != nil {
		md = string(meta)
	}
	if _, err := c.tx.ExecContext(ctx, `INSERT INTO messages (chat, seq, id, role, name, content, created_at, metadata, deleted)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.pk, seq, m.ID, string(m.Role), m.Name, m.Content, micros(m.CreatedAt), md, m.Deleted); err != nil {
		return fmt.Errorf("insert message: %w", err)
	}
	_, err := c.tx.StmtContext(ctx, c.s.ws.updateChat).ExecContext(ctx, seq, micros(c.chat.UpdatedAt), micros(now), c.pk)
	return err
}

func (c *chainTx) CheckID(id string) error { return sqlbatch.CheckText(id) }

func (c *chainTx) UpdateEpisode(ctx context.Context, ep memory.Episode, js []byte) (bool, error) {
	r, err := c.tx.ExecContext(ctx, `UPDATE episodes SET short = ?, summary = ?, model = ?, prompt_version = ?, indexed = 0,
		rebuild = CASE WHEN rebuild = ? THEN 0 ELSE rebuild END WHERE chat = ? AND id = ?`,
		ep.Short, string(js), ep.Model, ep.PromptVersion, ep.RebuildMark, c.pk, ep.ID)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n > 0, err
}

func (c *chainTx) DeleteEpisodeFacts(ctx context.Context, episodeID string) (map[string]string, error) {
	rows, err := c.tx.QueryContext(ctx, `DELETE FROM facts WHERE chat = ? AND episode_id = ?
		RETURNING id, COALESCE(superseded_by, '')`, c.pk, episodeID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	old := map[string]string{}
	for rows.Next() {
		var id, sup string
		if err := rows.Scan(&id, &sup); err != nil {
			return nil, err
		}
		old[id] = sup
	}
	return old, rows.Err()
}

func (c *chainTx) Unpoint(ctx context.Context, gone []string) error {
	return unpoint(ctx, c.tx, c.pk, gone)
}

func (c *chainTx) Tombstone(ctx context.Context, id string) (memory.Message, bool, error) {
	var (
		m    memory.Message
		role string
		at   int64
	)
	err := c.tx.QueryRowContext(ctx, `UPDATE messages SET content = '', name = '', metadata = NULL, deleted = 1, indexed = 0
		WHERE chat = ? AND id = ? AND deleted = 0 RETURNING seq, role, created_at`, c.pk, id).Scan(&m.Seq, &role, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return m, false, nil
	}
	m.Role, m.CreatedAt = memory.Role(role), fromMicros(at)
	return m, err == nil, err
}

func (c *chainTx) DeleteCitingFacts(ctx context.Context, seq int64) ([]string, error) {
	rows, err := c.tx.QueryContext(ctx, `DELETE FROM facts WHERE chat = ?
		AND EXISTS (SELECT 1 FROM json_each(facts.seqs) WHERE value = ?) RETURNING id`, c.pk, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var gone []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		gone = append(gone, id)
	}
	return gone, rows.Err()
}

func (c *chainTx) MarkEpisode(ctx context.Context, seq int64) error {
	_, err := c.tx.ExecContext(ctx, `UPDATE episodes SET rebuild = rebuild + 1, indexed = 0
		WHERE chat = ? AND from_seq <= ? AND to_seq >= ?`, c.pk, seq, seq)
	return err
}

func (c *chainTx) RecordForget(ctx context.Context, seq int64, now time.Time) error {
	_, err := c.tx.ExecContext(ctx, `INSERT INTO forgets (chat, seq, created_at) VALUES (?, ?, ?)
		ON CONFLICT (chat, seq) DO NOTHING`, c.pk, seq, micros(now))
	return err
}
