package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
)

var _ memory.FactStore = (*Store)(nil)

const factCols = `id, text, seqs, valid_at, kind, source, COALESCE(superseded_by, ''), episode_id, created_at`

func scanFacts(rows pgx.Rows, chatID string) ([]memory.Fact, error) {
	out := []memory.Fact{}
	var f memory.Fact
	_, err := pgx.ForEachRow(rows, []any{&f.ID, &f.Text, &f.Seqs, &f.ValidAt, &f.Kind, &f.Source, &f.SupersededBy, &f.EpisodeID, &f.CreatedAt}, func() error {
		c := f
		c.ChatID, c.ValidAt, c.CreatedAt = chatID, f.ValidAt.UTC(), f.CreatedAt.UTC()
		out = append(out, c)
		f.Seqs = nil // a fresh slice for the next row
		return nil
	})
	return out, err
}

// insertFacts stores prepared facts (see sqlbatch.PrepareFacts); a fact
// whose id the chat holds is left as it is. It returns the facts given.
func insertFacts(ctx context.Context, tx pgx.Tx, key memory.ChatKey, pk int64, facts []memory.Fact) ([]memory.Fact, error) {
	for _, f := range facts {
		var sup *string
		if f.SupersededBy != "" {
			sup = &f.SupersededBy
		}
		if _, err := tx.Exec(ctx, `INSERT INTO facts
			(chat, tenant, chat_id, id, text, seqs, first_seq, valid_at, kind, source, superseded_by, episode_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (chat, id) DO NOTHING`,
			pk, key.Tenant, key.ChatID, f.ID, f.Text, f.Seqs, f.FirstSeq(), f.ValidAt, f.Kind, f.Source, sup,
			f.EpisodeID, f.CreatedAt); err != nil {
			return nil, fmt.Errorf("insert fact: %w", err)
		}
	}
	return facts, nil
}

func (s *Store) facts(ctx context.Context, key memory.ChatKey, query string, args ...any) ([]memory.Fact, error) {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, query, append([]any{pk}, args...)...)
	if err != nil {
		return nil, err
	}
	return scanFacts(rows, key.ChatID)
}

// Facts reads the facts q selects; see memory.FactStore.
func (s *Store) Facts(ctx context.Context, key memory.ChatKey, q memory.FactQuery) ([]memory.Fact, error) {
	return records.FactReads{Page: s.factsPage, ByID: s.factsByID}.Facts(ctx, key, q)
}

// factsPage pages the chat's facts by first seq, never splitting one first
// seq across pages: the page ends at the first seq of its limit-th fact.
func (s *Store) factsPage(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int, includeSuperseded bool) ([]memory.Fact, error) {
	current := `AND ($3 OR superseded_by IS NULL)`
	offset := int64(math.MaxInt64)
	if limit > 0 {
		offset = int64(limit - 1)
	}
	facts, err := s.facts(ctx, key, `SELECT `+factCols+` FROM facts
		WHERE chat = $1 AND first_seq > $2 `+current+`
		AND first_seq <= COALESCE((SELECT first_seq FROM facts WHERE chat = $1 AND first_seq > $2 `+current+`
			ORDER BY first_seq, id LIMIT 1 OFFSET $4), $5)
		ORDER BY first_seq, id`, afterSeq, includeSuperseded, offset, int64(math.MaxInt64))
	if err != nil {
		return nil, wrap("facts", err)
	}
	return facts, nil
}

// factsByID returns the chat's facts with these ids.
func (s *Store) factsByID(ctx context.Context, key memory.ChatKey, ids []string) ([]memory.Fact, error) {
	facts, err := s.facts(ctx, key, `SELECT `+factCols+` FROM facts WHERE chat = $1 AND id = ANY($2)
		ORDER BY first_seq, id`, ids)
	if err != nil {
		return nil, wrap("facts by id", err)
	}
	return facts, nil
}

// SupersedeFacts points each old fact at its newer one, marking it
// unindexed when that changes.
func (s *Store) SupersedeFacts(ctx context.Context, key memory.ChatKey, oldToNew map[string]string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, err := chatPK(ctx, tx, key)
		if err != nil {
			return err
		}
		for old, nw := range oldToNew {
			var sup *string
			if nw != "" {
				sup = &nw
			}
			if _, err := tx.Exec(ctx, `UPDATE facts SET superseded_by = $3, indexed = false
				WHERE chat = $1 AND id = $2 AND superseded_by IS DISTINCT FROM $3`, pk, old, sup); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap("supersede facts", err)
}

// UnindexedFacts returns up to limit unindexed facts of the chat.
func (s *Store) UnindexedFacts(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Fact, error) {
	facts, err := s.facts(ctx, key, `SELECT `+factCols+` FROM facts
		WHERE chat = $1 AND NOT indexed ORDER BY first_seq, id LIMIT $2`, limitArg(limit))
	if err != nil {
		return nil, wrap("unindexed facts", err)
	}
	return facts, nil
}

// AddFacts stores facts not tied to a closed episode; see memory.FactStore.
func (s *Store) AddFacts(ctx context.Context, key memory.ChatKey, facts []memory.Fact) ([]memory.Fact, error) {
	var out []memory.Fact
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, chat, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return err
		}
		out, err = records.AddFacts(ctx, chainTx{tx: tx, key: key, pk: pk}, chat, facts, s.now())
		return err
	})
	if err != nil {
		return nil, wrap("add facts", err)
	}
	return out, nil
}
