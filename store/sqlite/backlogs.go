package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/contextd/contextd/memory"
)

// The backlogs of derived work (memory.Backlogs): one statement per kind
// lists its chats with the kind's cursor (0 for kinds without one), one
// write marks its work done.

// pendingSQL lists each kind's chats (the index kinds' off the partial
// indexes of their unindexed rows, DrawFacts' off chats_undrawn).
var pendingSQL = map[memory.WorkKind]string{
	memory.IndexEpisodes: `SELECT ` + chatCols + `, 0 FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM episodes WHERE indexed = 0)
		ORDER BY updated_at, id LIMIT ` + limitParam,
	memory.IndexFacts: `SELECT ` + chatCols + `, 0 FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM facts WHERE indexed = 0)
		ORDER BY updated_at, id LIMIT ` + limitParam,
	memory.DrawFacts: `SELECT ` + chatCols + `, facts_cursor FROM chats
		WHERE last_seq > facts_cursor ORDER BY updated_at, id LIMIT ` + limitParam,
	memory.MergeProfile: `SELECT ` + prefixed("c.", chatCols) + `, COALESCE(m.merged_to, 0)
		FROM chats c LEFT JOIN profile_merged m ON m.chat = c.id
		WHERE c.user_id != '' AND c.summary_cursor > COALESCE(m.merged_to, 0) ORDER BY c.updated_at LIMIT ` + limitParam,
	memory.SweepDeletions: `SELECT ` + chatCols + `, 0 FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM forgets)
		ORDER BY updated_at, id LIMIT ` + limitParam,
}

// markSQL marks an index kind's items with ids indexed (the ids a JSON
// array).
var markSQL = map[memory.WorkKind]string{
	memory.IndexEpisodes: `UPDATE episodes SET indexed = 1 WHERE chat = ? AND indexed = 0 AND id IN (SELECT value FROM json_each(?))`,
	memory.IndexFacts:    `UPDATE facts SET indexed = 1 WHERE chat = ? AND indexed = 0 AND id IN (SELECT value FROM json_each(?))`,
}

// resetSQL makes an index kind's work pending again.
var resetSQL = map[memory.WorkKind]string{
	memory.IndexTurns:    `UPDATE messages SET indexed = 0 WHERE indexed = 1`,
	memory.IndexEpisodes: `UPDATE episodes SET indexed = 0 WHERE indexed = 1`,
	memory.IndexFacts:    `UPDATE facts SET indexed = 0 WHERE indexed = 1`,
}

// Pending lists the chats with work of kind; see memory.Backlogs. The
// turns' statement is prepared: the indexer runs it on every pass.
func (s *Store) Pending(ctx context.Context, kind memory.WorkKind, limit int) ([]memory.PendingChat, error) {
	var (
		rows *sql.Rows
		err  error
	)
	if q, ok := pendingSQL[kind]; ok {
		rows, err = s.query(ctx, q, sqlLimit(limit))
	} else if kind == memory.IndexTurns {
		rows, err = s.rs.unindexedChats.QueryContext(ctx, sqlLimit(limit))
	} else {
		return nil, fmt.Errorf("sqlite: %w", kind.Unknown("pending"))
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: pending %s: %w", kind, err)
	}
	out, err := scanPending(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: pending %s: %w", kind, err)
	}
	return out, nil
}

// scanPending reads chatCols and a cursor.
func scanPending(rows *sql.Rows) ([]memory.PendingChat, error) {
	defer rows.Close()
	out := []memory.PendingChat{}
	for rows.Next() {
		var p memory.PendingChat
		var cat, uat int64
		c := &p.Chat
		if err := rows.Scan(new(int64), &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &cat, &uat, &c.DirtyMark, &p.Cursor); err != nil {
			return nil, err
		}
		c.CreatedAt, c.UpdatedAt, c.SummaryDirty = fromMicros(cat), fromMicros(uat), c.DirtyMark > 0
		out = append(out, p)
	}
	return out, rows.Err()
}

// Done marks work of kind done; see memory.Backlogs. The indexer's and the
// facts drawer's marks go in the write transaction of the appends queued
// beside them (group.go): they cost no commit of their own under a stream
// of appends.
func (s *Store) Done(ctx context.Context, kind memory.WorkKind, marks []memory.Mark) ([]memory.ChatKey, error) {
	if len(marks) == 0 {
		return nil, nil
	}
	var gone []memory.ChatKey
	var err error
	switch kind {
	case memory.IndexTurns:
		err = s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
			gone = gone[:0] // the group may run this again alone
			return s.markTurns(ctx, tx, marks, &gone)
		})
	case memory.IndexEpisodes, memory.IndexFacts:
		err = s.write(ctx, func(tx *sql.Tx) error {
			gone = gone[:0]
			return s.markItems(ctx, tx, markSQL[kind], marks, &gone)
		})
	case memory.DrawFacts:
		err = s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error { return markDrawn(ctx, tx, marks) })
	case memory.MergeProfile:
		err = s.write(ctx, func(tx *sql.Tx) error { return markMerged(ctx, tx, marks) })
	case memory.SweepDeletions:
		defer s.cp.scrubSoon() // what it erases must leave the WAL too
		err = s.write(ctx, func(tx *sql.Tx) error { return forgetsDone(ctx, tx, marks) })
	default:
		return nil, fmt.Errorf("sqlite: %w", kind.Unknown("done"))
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: done %s: %w", kind, err)
	}
	return gone, nil
}

// markTurns marks each mark's seqs indexed. Chats not found, or created
// again under their id since (another created_at), are added to gone, and
// a re-created chat's turns are unindexed again; a live turn deleted since
// it was read is left unindexed.
func (s *Store) markTurns(ctx context.Context, tx *sql.Tx, marks []memory.Mark, gone *[]memory.ChatKey) error {
	created, mark, unindex := tx.StmtContext(ctx, s.ws.chatCreated), tx.StmtContext(ctx, s.ws.markIndexed), tx.StmtContext(ctx, s.ws.unindexChat)
	for _, m := range marks {
		var pk, at int64
		err := created.QueryRowContext(ctx, m.Chat.Tenant, m.Chat.ChatID).Scan(&pk, &at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			*gone = append(*gone, m.Chat)
			continue
		case err != nil:
			return err
		case !m.Created.IsZero() && at != micros(m.Created):
			// Another chat under the same id: the caller wipes the id's
			// points, so this chat's turns, episodes and facts are
			// indexed anew.
			if err := s.unindexChat(ctx, tx, unindex, pk); err != nil {
				return err
			}
			*gone = append(*gone, m.Chat)
			continue
		}
		for _, set := range []struct {
			deleted int
			seqs    []int64
		}{{0, m.Seqs}, {1, m.Forgotten}} {
			if len(set.seqs) == 0 {
				continue
			}
			if _, err := mark.ExecContext(ctx, pk, set.deleted, seqsJSON(set.seqs)); err != nil {
				return err
			}
		}
	}
	return nil
}

// unindexChat marks every turn, episode and fact of the chat unindexed.
func (s *Store) unindexChat(ctx context.Context, tx *sql.Tx, turns *sql.Stmt, pk int64) error {
	for _, st := range []*sql.Stmt{turns, tx.StmtContext(ctx, s.ws.unindexChatEpisodes), tx.StmtContext(ctx, s.ws.unindexChatFacts)} {
		if _, err := st.ExecContext(ctx, pk); err != nil {
			return err
		}
	}
	return nil
}

// markItems marks episodes or facts indexed by id with q (markSQL);
// chats not found are added to gone.
func (s *Store) markItems(ctx context.Context, tx *sql.Tx, q string, marks []memory.Mark, gone *[]memory.ChatKey) error {
	pkOf := tx.StmtContext(ctx, s.ws.chatPK)
	for _, m := range marks {
		pk, err := chatPK(ctx, pkOf, m.Chat)
		if errors.Is(err, memory.ErrNotFound) {
			*gone = append(*gone, m.Chat)
			continue
		}
		if err != nil {
			return err
		}
		if len(m.IDs) == 0 {
			continue
		}
		ids, err := json.Marshal(m.IDs)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q, pk, string(ids)); err != nil {
			return err
		}
	}
	return nil
}

// markDrawn moves facts cursors forward.
func markDrawn(ctx context.Context, tx *sql.Tx, marks []memory.Mark) error {
	for _, m := range marks {
		created := int64(-1) // not checked
		if !m.Created.IsZero() {
			created = micros(m.Created)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chats SET facts_cursor = min(?, last_seq)
			WHERE tenant = ? AND chat_id = ? AND (? < 0 OR created_at = ?) AND facts_cursor < min(?, last_seq)`,
			m.ToSeq, m.Chat.Tenant, m.Chat.ChatID, created, created, m.ToSeq); err != nil {
			return err
		}
	}
	return nil
}

// markMerged moves what the profile merged of each chat forward, or (ToSeq
// 0) forgets it.
func markMerged(ctx context.Context, tx *sql.Tx, marks []memory.Mark) error {
	for _, m := range marks {
		q := `INSERT INTO profile_merged (chat, merged_to) SELECT id, ?1 FROM chats WHERE tenant = ?2 AND chat_id = ?3
			ON CONFLICT (chat) DO UPDATE SET merged_to = max(merged_to, excluded.merged_to)`
		if m.ToSeq == 0 {
			q = `DELETE FROM profile_merged WHERE ?1 = 0 AND chat = (SELECT id FROM chats WHERE tenant = ?2 AND chat_id = ?3)`
		}
		if _, err := tx.ExecContext(ctx, q, m.ToSeq, m.Chat.Tenant, m.Chat.ChatID); err != nil {
			return err
		}
	}
	return nil
}

// forgetsDone drops the forget rows of the marks' seqs.
func forgetsDone(ctx context.Context, tx *sql.Tx, marks []memory.Mark) error {
	for _, m := range marks {
		if len(m.Seqs) == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM forgets WHERE chat = `+chatOf+` AND seq IN (SELECT value FROM json_each(?))`,
			m.Chat.Tenant, m.Chat.ChatID, seqsJSON(m.Seqs)); err != nil {
			return err
		}
	}
	return nil
}

// Reset makes all the work of an index kind pending again; see
// memory.Backlogs.
func (s *Store) Reset(ctx context.Context, kind memory.WorkKind) error {
	q, ok := resetSQL[kind]
	if !ok {
		return fmt.Errorf("sqlite: %w", kind.Unknown("reset"))
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, q)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: reset %s: %w", kind, err)
	}
	return nil
}
