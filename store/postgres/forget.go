package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/sqlbatch"
)

var _ memory.MessageForgetter = (*Store)(nil)

// DeleteMessage tombstones one message and marks what was derived from it,
// in one transaction holding the chat's row lock; see
// memory.MessageForgetter.
func (s *Store) DeleteMessage(ctx context.Context, key memory.ChatKey, messageID string) (memory.Message, error) {
	var m memory.Message
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, _, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return err
		}
		var role string
		err = tx.QueryRow(ctx, `UPDATE messages SET content = '', name = '', metadata = NULL, deleted = true, indexed = false
			WHERE chat = $1 AND id = $2 AND NOT deleted RETURNING seq, role, created_at`, pk, messageID).Scan(&m.Seq, &role, &m.CreatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("message %q of chat %q: %w", messageID, key.ChatID, memory.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("tombstone: %w", err)
		}
		m.ID, m.Role, m.CreatedAt, m.Deleted = messageID, memory.Role(role), m.CreatedAt.UTC(), true
		return markDerived(ctx, tx, pk, m.Seq, s.now())
	})
	if err != nil {
		return memory.Message{}, wrap("delete message", err)
	}
	return m, nil
}

// markDerived deletes the facts citing seq and marks the rest of what was
// derived from it: its episode, the chat's summary, the forget work.
func markDerived(ctx context.Context, tx pgx.Tx, pk, seq int64, now time.Time) error {
	rows, err := tx.Query(ctx, `DELETE FROM facts WHERE chat = $1 AND $2 = ANY(seqs) RETURNING id`, pk, seq)
	if err != nil {
		return fmt.Errorf("delete facts: %w", err)
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("delete facts: %w", err)
	}
	if err := unpoint(ctx, tx, pk, gone); err != nil {
		return err
	}
	for _, st := range []struct {
		what, sql string
		args      []any
	}{
		{"mark episode", `UPDATE episodes SET rebuild = rebuild + 1, indexed = false
			WHERE chat = $1 AND from_seq <= $2 AND to_seq >= $2`, []any{pk, seq}},
		{"mark summary", markDirty, []any{pk, seq}},
		{"record forget", `INSERT INTO forgets (chat, seq, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (chat, seq) DO NOTHING`, []any{pk, seq, now}},
	} {
		if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
			return fmt.Errorf("%s: %w", st.what, err)
		}
	}
	return nil
}

// markDirty bumps the chat's dirty mark and keeps the smallest seq deleted
// since the summary was last clean (parameters: the chat's row id, the
// seq). The SET expressions read the row as it was.
const markDirty = `UPDATE chats SET summary_dirty = abs(summary_dirty) + 1,
	dirty_from = CASE WHEN summary_dirty > 0 THEN LEAST(dirty_from, $2) ELSE $2 END WHERE id = $1`

// unpoint clears superseded_by pointers to facts that are gone (and marks
// the facts unindexed: they are current again).
func unpoint(ctx context.Context, tx pgx.Tx, pk int64, gone []string) error {
	if len(gone) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE facts SET superseded_by = NULL, indexed = false
		WHERE chat = $1 AND superseded_by = ANY($2)
		AND superseded_by NOT IN (SELECT id FROM facts WHERE chat = $1)`, pk, gone)
	if err != nil {
		return fmt.Errorf("clear superseded_by: %w", err)
	}
	return nil
}

// PendingForgets lists forget work, oldest first.
func (s *Store) PendingForgets(ctx context.Context, limit int) ([]memory.Forget, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.tenant, c.chat_id, c.user_id, f.seq
		FROM forgets f JOIN chats c ON c.id = f.chat ORDER BY f.created_at, f.chat, f.seq LIMIT $1`, limitArg(limit))
	if err != nil {
		return nil, wrap("pending forgets", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.Forget, error) {
		var f memory.Forget
		err := row.Scan(&f.Chat.Tenant, &f.Chat.ChatID, &f.UserID, &f.Seq)
		return f, err
	})
	if err != nil {
		return nil, wrap("pending forgets", err)
	}
	if out == nil {
		out = []memory.Forget{}
	}
	return out, nil
}

// EpisodesToRebuild lists episodes marked for rebuild with their chats.
func (s *Store) EpisodesToRebuild(ctx context.Context, limit int) ([]memory.EpisodeToRebuild, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.tenant, c.chat_id, e.id::text
		FROM episodes e JOIN chats c ON c.id = e.chat WHERE e.rebuild > 0
		ORDER BY c.updated_at, c.id, e.from_seq LIMIT $1`, limitArg(limit))
	if err != nil {
		return nil, wrap("episodes to rebuild", err)
	}
	type ref struct {
		key memory.ChatKey
		id  string
	}
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ref, error) {
		var r ref
		err := row.Scan(&r.key.Tenant, &r.key.ChatID, &r.id)
		return r, err
	})
	if err != nil {
		return nil, wrap("episodes to rebuild", err)
	}
	// Rebuilds are rare: one more read per episode costs nothing.
	out := []memory.EpisodeToRebuild{}
	for _, r := range refs {
		chat, err := s.Chat(ctx, r.key)
		if errors.Is(err, memory.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		eps, err := s.episodes(ctx, r.key, `SELECT `+episodeCols+` FROM episodes WHERE chat = $1 AND id::text = $2`, r.id)
		if err != nil {
			return nil, wrap("episodes to rebuild", err)
		}
		if len(eps) == 1 {
			out = append(out, memory.EpisodeToRebuild{Chat: chat, Episode: eps[0]})
		}
	}
	return out, nil
}

// RebuildEpisode overwrites an episode's summaries and replaces its facts;
// see memory.MessageForgetter.
func (s *Store) RebuildEpisode(ctx context.Context, key memory.ChatKey, ep memory.Episode) error {
	now := s.now().Truncate(time.Microsecond)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, chat, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return err
		}
		js, err := sqlbatch.PrepareRebuild(&ep)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE episodes SET short = $1, summary = $2::jsonb, model = $3, prompt_version = $4, indexed = false,
			rebuild = CASE WHEN rebuild = $5 THEN 0 ELSE rebuild END WHERE chat = $6 AND id::text = $7`,
			ep.Short, string(js), ep.Model, ep.PromptVersion, ep.RebuildMark, pk, ep.ID)
		if err != nil {
			return fmt.Errorf("update episode: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("episode %q of chat %q: %w", ep.ID, key.ChatID, memory.ErrNotFound)
		}
		return replaceFacts(ctx, tx, key, pk, chat.LastSeq, ep, now)
	})
	return wrap("rebuild episode", err)
}

// replaceFacts replaces the episode's facts with ep.Facts. A new fact with
// an old one's id keeps what superseded it, unless it says otherwise.
func replaceFacts(ctx context.Context, tx pgx.Tx, key memory.ChatKey, pk, lastSeq int64, ep memory.Episode, now time.Time) error {
	facts, err := sqlbatch.PrepareFacts(key.Tenant, key.ChatID, ep.ID, lastSeq, ep.Facts, now)
	if err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `DELETE FROM facts WHERE chat = $1 AND episode_id = $2
		RETURNING id, COALESCE(superseded_by, '')`, pk, ep.ID)
	if err != nil {
		return fmt.Errorf("delete facts: %w", err)
	}
	old := map[string]string{}
	var gone []string
	var id, sup string
	if _, err := pgx.ForEachRow(rows, []any{&id, &sup}, func() error {
		old[id] = sup
		gone = append(gone, id)
		return nil
	}); err != nil {
		return fmt.Errorf("delete facts: %w", err)
	}
	for i := range facts {
		if facts[i].SupersededBy == "" {
			facts[i].SupersededBy = old[facts[i].ID]
		}
	}
	dead, err := tombstones(ctx, tx, pk, 1, lastSeq)
	if err != nil {
		return err
	}
	if _, err := insertFacts(ctx, tx, key, pk, sqlbatch.WithoutSeqs(facts, dead)); err != nil {
		return err
	}
	return unpoint(ctx, tx, pk, gone)
}

// ReplaceSummary makes rec the chat's only summary record; see
// memory.MessageForgetter.
func (s *Store) ReplaceSummary(ctx context.Context, key memory.ChatKey, expectCursor, dirtyMark int64, rec memory.SummaryRecord) (memory.SummaryRecord, error) {
	recs := []memory.SummaryRecord{rec}
	if rec.CoveredToSeq == 0 { // nothing covered: no summary, as before
		recs = nil
	}
	if err := s.rewriteChain(ctx, key, expectCursor, dirtyMark, rec.CoveredToSeq, "", recs); err != nil {
		return memory.SummaryRecord{}, wrap("replace summary", err)
	}
	if len(recs) > 0 {
		rec = recs[0]
	}
	rec.ParentID, rec.Depth = nil, 0
	return rec, nil
}

// RebuildSummary keeps the chain up to keep and writes recs on top; see
// memory.MessageForgetter.
func (s *Store) RebuildSummary(ctx context.Context, key memory.ChatKey, expectCursor, dirtyMark int64, keep string, recs []memory.SummaryRecord) error {
	to := expectCursor
	if len(recs) > 0 {
		to = recs[len(recs)-1].CoveredToSeq
	}
	if err := s.rewriteChain(ctx, key, expectCursor, dirtyMark, to, keep, slices.Clone(recs)); err != nil {
		return wrap("rebuild summary", err)
	}
	return nil
}

// rewriteChain deletes the chain's records after keep ("": all), writes
// recs on top (setting their ids) and clears the dirty mark when it is
// still dirtyMark, in one transaction holding the chat's row lock that
// checks that the cursor is expectCursor and that to, where recs leave
// it, is in range.
func (s *Store) rewriteChain(ctx context.Context, key memory.ChatKey, expectCursor, dirtyMark, to int64, keep string, recs []memory.SummaryRecord) error {
	now := s.now().Truncate(time.Microsecond)
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, chat, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return err
		}
		if chat.SummaryCursor != expectCursor {
			return fmt.Errorf("cursor is %d, expected %d: %w", chat.SummaryCursor, expectCursor, memory.ErrCursorMoved)
		}
		if err := sqlbatch.CheckChain(recs, expectCursor, to, chat.LastSeq); err != nil {
			return err
		}
		depth, err := keptDepth(ctx, tx, pk, keep, len(recs) == 0)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM conversation_summaries WHERE chat = $1 AND depth > $2`, pk, depth); err != nil {
			return fmt.Errorf("delete chain: %w", err)
		}
		var parent *string
		if keep != "" {
			parent = &keep
		}
		for i := range recs {
			recs[i].ParentID, recs[i].Depth = parent, depth+1
			if err := writeRecord(ctx, tx, key, pk, &recs[i], now); err != nil {
				return err
			}
			parent, depth = &recs[i].ID, depth+1
		}
		_, err = tx.Exec(ctx, `UPDATE chats SET summary_dirty = CASE WHEN summary_dirty = $1 AND summary_dirty > 0 THEN -summary_dirty ELSE summary_dirty END
			WHERE id = $2`, dirtyMark, pk)
		return err
	})
}

// keptDepth is the depth of the record keep (-1 for ""): ErrConflict when
// the chain holds no such record, or when head it must be the head.
func keptDepth(ctx context.Context, tx pgx.Tx, pk int64, keep string, head bool) (int, error) {
	if keep == "" {
		return -1, nil
	}
	var depth, top int
	err := tx.QueryRow(ctx, `SELECT depth, (SELECT max(depth) FROM conversation_summaries WHERE chat = $1)
		FROM conversation_summaries WHERE chat = $1 AND id::text = $2`, pk, keep).Scan(&depth, &top)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("no record %q in the chain: %w", keep, memory.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("kept record: %w", err)
	}
	if head && depth != top {
		return 0, fmt.Errorf("record %q is not the head and nothing is written on it: %w", keep, memory.ErrConflict)
	}
	return depth, nil
}
