package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
)

var _ memory.EpisodeStore = (*Store)(nil)

const episodeCols = `id::text, from_seq, to_seq, started_at, ended_at, short, summary, model, prompt_version, created_at, rebuild`

func scanEpisode(row pgx.Row, chatID string) (memory.Episode, error) {
	var (
		e  memory.Episode
		js []byte
	)
	if err := row.Scan(&e.ID, &e.FromSeq, &e.ToSeq, &e.StartedAt, &e.EndedAt, &e.Short, &js, &e.Model, &e.PromptVersion, &e.CreatedAt, &e.RebuildMark); err != nil {
		return e, err
	}
	e.Rebuild = e.RebuildMark > 0
	if err := json.Unmarshal(js, &e.Summary); err != nil {
		return e, fmt.Errorf("episode %s: %w", e.ID, err)
	}
	e.Summary.UpdatedAt = e.Summary.UpdatedAt.UTC()
	e.Summary.Normalize()
	e.ChatID = chatID
	e.Turns = int(e.ToSeq - e.FromSeq + 1)
	e.StartedAt, e.EndedAt, e.CreatedAt = e.StartedAt.UTC(), e.EndedAt.UTC(), e.CreatedAt.UTC()
	return e, nil
}

// CloseEpisodes stores eps whole or not at all; see memory.EpisodeStore.
// The chat's row lock serialises closers of one chat.
func (s *Store) CloseEpisodes(ctx context.Context, key memory.ChatKey, expectTo int64, eps []memory.Episode) ([]memory.Episode, error) {
	eps = slices.Clone(eps)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, chat, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return err
		}
		return records.CloseEpisodes(ctx, chainTx{tx: tx, key: key, pk: pk}, chat, expectTo, eps, s.now())
	})
	if err != nil {
		return nil, wrap("close episodes", err)
	}
	return eps, nil
}

func (s *Store) episodes(ctx context.Context, key memory.ChatKey, query string, args ...any) ([]memory.Episode, error) {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, query, append([]any{pk}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []memory.Episode{}
	for rows.Next() {
		e, err := scanEpisode(rows, key.ChatID)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Episodes pages the chat's episodes by from_seq (the newest ones with
// q.Latest); see memory.EpisodeReader.
func (s *Store) Episodes(ctx context.Context, key memory.ChatKey, q memory.EpisodeQuery) ([]memory.Episode, error) {
	eps, err := s.episodes(ctx, key, `SELECT `+episodeCols+` FROM episodes
		WHERE chat = $1 AND from_seq > $2 ORDER BY `+records.EpisodeOrder(q)+` LIMIT $3`, q.AfterSeq, limitArg(q.Limit))
	if err != nil {
		return nil, wrap("episodes", err)
	}
	return records.InSeqOrder(q, eps), nil
}

// UnindexedEpisodes returns up to limit unindexed episodes of the chat.
func (s *Store) UnindexedEpisodes(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Episode, error) {
	eps, err := s.episodes(ctx, key, `SELECT `+episodeCols+` FROM episodes
		WHERE chat = $1 AND NOT indexed ORDER BY from_seq LIMIT $2`, limitArg(limit))
	if err != nil {
		return nil, wrap("unindexed episodes", err)
	}
	return eps, nil
}

// tombstones returns the chat's deleted seqs within from..to (an indexed
// read: deletions are rare).
func tombstones(ctx context.Context, q querier, pk, from, to int64) (map[int64]bool, error) {
	rows, err := q.Query(ctx, `SELECT seq FROM messages WHERE chat = $1 AND deleted AND seq BETWEEN $2 AND $3`, pk, from, to)
	if err != nil {
		return nil, fmt.Errorf("deleted turns: %w", err)
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("deleted turns: %w", err)
	}
	var out map[int64]bool
	for _, q := range seqs {
		if out == nil {
			out = map[int64]bool{}
		}
		out[q] = true
	}
	return out, nil
}
