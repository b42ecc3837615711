package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
)

var _ memory.FactStore = (*Store)(nil)

const factCols = `id, text, seqs, valid_at, kind, source, COALESCE(superseded_by, ''), episode_id, created_at`

func scanFact(sc scanner, chatID string) (memory.Fact, error) {
	var (
		f           memory.Fact
		seqs        []byte
		valid, made int64
	)
	if err := sc.Scan(&f.ID, &f.Text, &seqs, &valid, &f.Kind, &f.Source, &f.SupersededBy, &f.EpisodeID, &made); err != nil {
		return f, err
	}
	if err := json.Unmarshal(seqs, &f.Seqs); err != nil {
		return f, fmt.Errorf("fact %s: seqs: %w", f.ID, err)
	}
	f.ChatID = chatID
	f.ValidAt, f.CreatedAt = fromMicros(valid), fromMicros(made)
	return f, nil
}

// insertFacts stores prepared facts (see sqlbatch.PrepareFacts); a fact
// whose id the chat holds is left as it is. It returns the facts given.
func insertFacts(ctx context.Context, tx *sql.Tx, pk int64, facts []memory.Fact) ([]memory.Fact, error) {
	for _, f := range facts {
		var sup any
		if f.SupersededBy != "" {
			sup = f.SupersededBy
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO facts
			(chat, id, text, seqs, first_seq, valid_at, kind, source, superseded_by, episode_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chat, id) DO NOTHING`,
			pk, f.ID, f.Text, seqsJSON(f.Seqs), f.FirstSeq(), micros(f.ValidAt), f.Kind, f.Source, sup,
			f.EpisodeID, micros(f.CreatedAt)); err != nil {
			return nil, fmt.Errorf("insert fact: %w", err)
		}
	}
	return facts, nil
}

func (s *Store) facts(ctx context.Context, key memory.ChatKey, query string, args ...any) ([]memory.Fact, error) {
	return queryOfChat(ctx, s, key, scanFact, query, args...)
}

// Facts reads the facts q selects; see memory.FactStore.
func (s *Store) Facts(ctx context.Context, key memory.ChatKey, q memory.FactQuery) ([]memory.Fact, error) {
	return records.FactReads{Page: s.factsPage, ByID: s.factsByID}.Facts(ctx, key, q)
}

// factsPage pages the chat's facts by first seq, never splitting one first
// seq across pages: the page ends at the first seq of its limit-th fact.
func (s *Store) factsPage(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int, includeSuperseded bool) ([]memory.Fact, error) {
	current := `AND (?3 OR superseded_by IS NULL)`
	facts, err := s.facts(ctx, key, `SELECT `+factCols+` FROM facts
		WHERE chat = ?1 AND first_seq > ?2 `+current+`
		AND first_seq <= COALESCE((SELECT first_seq FROM facts WHERE chat = ?1 AND first_seq > ?2 `+current+`
			ORDER BY first_seq, id LIMIT 1 OFFSET ?4), ?5)
		ORDER BY first_seq, id`, afterSeq, includeSuperseded, lastOffset(limit), int64(math.MaxInt64))
	if err != nil {
		return nil, fmt.Errorf("sqlite: facts: %w", err)
	}
	return facts, nil
}

// lastOffset is the offset of a page's limit-th row; with no limit, one
// past any row (the page then ends at no first seq).
func lastOffset(limit int) int64 {
	if limit <= 0 {
		return math.MaxInt64
	}
	return int64(limit - 1)
}

// factsByID returns the chat's facts with these ids.
func (s *Store) factsByID(ctx context.Context, key memory.ChatKey, ids []string) ([]memory.Fact, error) {
	js, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	facts, err := s.facts(ctx, key, `SELECT `+factCols+` FROM facts
		WHERE chat = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY first_seq, id`, string(js))
	if err != nil {
		return nil, fmt.Errorf("sqlite: facts by id: %w", err)
	}
	return facts, nil
}

// SupersedeFacts points each old fact at its newer one, marking it
// unindexed when that changes.
func (s *Store) SupersedeFacts(ctx context.Context, key memory.ChatKey, oldToNew map[string]string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, err := chatPK(ctx, tx.StmtContext(ctx, s.ws.chatPK), key)
		if err != nil {
			return err
		}
		for old, nw := range oldToNew {
			var sup any
			if nw != "" {
				sup = nw
			}
			if _, err := tx.ExecContext(ctx, `UPDATE facts SET superseded_by = ?, indexed = 0
				WHERE chat = ? AND id = ? AND superseded_by IS NOT ?`, sup, pk, old, sup); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: supersede facts: %w", err)
	}
	return nil
}

// UnindexedFacts returns up to limit unindexed facts of the chat.
func (s *Store) UnindexedFacts(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Fact, error) {
	facts, err := s.facts(ctx, key, `SELECT `+factCols+` FROM facts
		WHERE chat = ? AND indexed = 0 ORDER BY first_seq, id LIMIT ?`, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed facts: %w", err)
	}
	return facts, nil
}

// AddFacts stores facts not tied to a closed episode; see memory.FactStore.
func (s *Store) AddFacts(ctx context.Context, key memory.ChatKey, facts []memory.Fact) ([]memory.Fact, error) {
	var out []memory.Fact
	err := s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error { // beside the appends whose facts these are
		out = nil
		pk, chat, err := loadChat(ctx, tx.StmtContext(ctx, s.ws.chat), key)
		if err != nil {
			return err
		}
		out, err = records.AddFacts(ctx, &chainTx{s: s, tx: tx, pk: pk, chat: chat}, chat, facts, s.now())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: add facts: %w", err)
	}
	return out, nil
}
