package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
)

var _ memory.EpisodeStore = (*Store)(nil)

const episodeCols = `id, from_seq, to_seq, started_at, ended_at, short, summary, model, prompt_version, created_at, rebuild`

func scanEpisode(sc scanner, chatID string) (memory.Episode, error) {
	var (
		e                  memory.Episode
		js                 []byte
		start, end, create int64
	)
	if err := sc.Scan(&e.ID, &e.FromSeq, &e.ToSeq, &start, &end, &e.Short, &js, &e.Model, &e.PromptVersion, &create, &e.RebuildMark); err != nil {
		return e, err
	}
	e.Rebuild = e.RebuildMark > 0
	var err error
	if e.Summary, err = decodeSummary(js); err != nil {
		return e, fmt.Errorf("episode %s: %w", e.ID, err)
	}
	e.Summary.Normalize()
	e.ChatID = chatID
	e.Turns = int(e.ToSeq - e.FromSeq + 1)
	e.StartedAt, e.EndedAt, e.CreatedAt = fromMicros(start), fromMicros(end), fromMicros(create)
	return e, nil
}

// CloseEpisodes stores eps whole or not at all; see memory.EpisodeStore.
func (s *Store) CloseEpisodes(ctx context.Context, key memory.ChatKey, expectTo int64, eps []memory.Episode) ([]memory.Episode, error) {
	eps = slices.Clone(eps)
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, chat, err := loadChat(ctx, tx.StmtContext(ctx, s.ws.chat), key)
		if err != nil {
			return err
		}
		return records.CloseEpisodes(ctx, &chainTx{s: s, tx: tx, pk: pk, chat: chat}, chat, expectTo, eps, s.now())
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: close episodes: %w", err)
	}
	return eps, nil
}

// tombstones returns the chat's deleted seqs within from..to (an indexed
// read: deletions are rare).
func tombstones(ctx context.Context, tx *sql.Tx, pk, from, to int64) (map[int64]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq FROM messages WHERE chat = ? AND deleted = 1 AND seq BETWEEN ? AND ?`, pk, from, to)
	if err != nil {
		return nil, fmt.Errorf("deleted turns: %w", err)
	}
	defer rows.Close()
	var out map[int64]bool
	for rows.Next() {
		var q int64
		if err := rows.Scan(&q); err != nil {
			return nil, fmt.Errorf("deleted turns: %w", err)
		}
		if out == nil {
			out = map[int64]bool{}
		}
		out[q] = true
	}
	return out, rows.Err()
}

func (s *Store) episodes(ctx context.Context, key memory.ChatKey, query string, args ...any) ([]memory.Episode, error) {
	return queryOfChat(ctx, s, key, scanEpisode, query, args...)
}

// queryOfChat runs query over the read pool with the chat's row id as its
// first parameter (ErrNotFound: no such chat) and scans every row: the
// listings of a chat's episodes and facts.
func queryOfChat[T any](ctx context.Context, s *Store, key memory.ChatKey, scan func(scanner, string) (T, error), query string, args ...any) ([]T, error) {
	pk, err := chatPK(ctx, s.rs.chatPK, key)
	if err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, query, append([]any{pk}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows, key.ChatID)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Episodes pages the chat's episodes by from_seq (the newest ones with
// q.Latest); see memory.EpisodeReader.
func (s *Store) Episodes(ctx context.Context, key memory.ChatKey, q memory.EpisodeQuery) ([]memory.Episode, error) {
	eps, err := s.episodes(ctx, key, `SELECT `+episodeCols+` FROM episodes
		WHERE chat = ? AND from_seq > ? ORDER BY `+records.EpisodeOrder(q)+` LIMIT ?`, q.AfterSeq, sqlLimit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: episodes: %w", err)
	}
	return records.InSeqOrder(q, eps), nil
}

// UnindexedEpisodes returns up to limit unindexed episodes of the chat.
func (s *Store) UnindexedEpisodes(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Episode, error) {
	eps, err := s.episodes(ctx, key, `SELECT `+episodeCols+` FROM episodes
		WHERE chat = ? AND indexed = 0 ORDER BY from_seq LIMIT ?`, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed episodes: %w", err)
	}
	return eps, nil
}
