package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
)

// The backlogs of derived work (memory.Backlogs): one statement per kind
// lists its chats with the kind's cursor (0 for kinds without one), one
// write marks its work done.

// pendingSQL lists each kind's chats.
var pendingSQL = map[memory.WorkKind]string{
	memory.IndexTurns: `SELECT ` + chatCols + `, 0 FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM messages WHERE NOT indexed)
		ORDER BY updated_at, id LIMIT $1`,
	memory.IndexEpisodes: `SELECT ` + chatCols + `, 0 FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM episodes WHERE NOT indexed)
		ORDER BY updated_at, id LIMIT $1`,
	memory.IndexFacts: `SELECT ` + chatCols + `, 0 FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM facts WHERE NOT indexed)
		ORDER BY updated_at, id LIMIT $1`,
	// chats_undrawn holds them.
	memory.DrawFacts: `SELECT ` + chatCols + `, facts_cursor FROM chats
		WHERE last_seq > facts_cursor ORDER BY updated_at, id LIMIT $1`,
	memory.MergeProfile: `SELECT c.` + strings.ReplaceAll(chatCols, ", ", ", c.") + `, COALESCE(m.merged_to, 0)
		FROM chats c LEFT JOIN profile_merged m ON m.chat = c.id
		WHERE c.user_id <> '' AND c.summary_cursor > COALESCE(m.merged_to, 0) ORDER BY c.updated_at LIMIT $1`,
	memory.SweepDeletions: `SELECT ` + chatCols + `, 0 FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM forgets)
		ORDER BY updated_at, id LIMIT $1`,
}

// itemTables hold the index kinds' items marked by id.
var itemTables = map[memory.WorkKind]string{memory.IndexEpisodes: "episodes", memory.IndexFacts: "facts"}

// resetSQL makes an index kind's work pending again.
var resetSQL = map[memory.WorkKind]string{
	memory.IndexTurns:    `UPDATE messages SET indexed = false WHERE indexed`,
	memory.IndexEpisodes: `UPDATE episodes SET indexed = false WHERE indexed`,
	memory.IndexFacts:    `UPDATE facts SET indexed = false WHERE indexed`,
}

// Pending lists the chats with work of kind; see memory.Backlogs.
func (s *Store) Pending(ctx context.Context, kind memory.WorkKind, limit int) ([]memory.PendingChat, error) {
	q, ok := pendingSQL[kind]
	if !ok {
		return nil, fmt.Errorf("postgres: %w", kind.Unknown("pending"))
	}
	rows, err := s.pool.Query(ctx, q, limitArg(limit))
	if err != nil {
		return nil, wrap("pending "+string(kind), err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (memory.PendingChat, error) {
		var p memory.PendingChat
		c := &p.Chat
		err := r.Scan(new(int64), &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &c.CreatedAt, &c.UpdatedAt, &c.DirtyMark, &p.Cursor)
		c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
		c.SummaryDirty = c.DirtyMark > 0
		return p, err
	})
	if err != nil {
		return nil, wrap("pending "+string(kind), err)
	}
	if out == nil {
		out = []memory.PendingChat{}
	}
	return out, nil
}

// Done marks work of kind done; see memory.Backlogs. Each kind is one
// statement (one snapshot), but for MergeProfile and SweepDeletions: one
// transaction.
func (s *Store) Done(ctx context.Context, kind memory.WorkKind, marks []memory.Mark) ([]memory.ChatKey, error) {
	if len(marks) == 0 {
		return nil, nil
	}
	var (
		gone []memory.ChatKey
		err  error
	)
	switch kind {
	case memory.IndexTurns:
		gone, err = s.markTurns(ctx, marks)
	case memory.IndexEpisodes, memory.IndexFacts:
		gone, err = s.markItems(ctx, kind, marks)
	case memory.DrawFacts:
		err = s.markDrawn(ctx, marks)
	case memory.MergeProfile, memory.SweepDeletions:
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return eachMark(ctx, tx, kind, marks) })
	default:
		return nil, fmt.Errorf("postgres: %w", kind.Unknown("done"))
	}
	if err != nil {
		return nil, wrap("done "+string(kind), err)
	}
	return gone, nil
}

// markTurns marks each mark's seqs indexed and lists the chats not found,
// in one statement: a chat with no seqs is checked through seq 0, which no
// turn has. A live turn is marked only while it is not deleted, a
// tombstone only as one; a chat whose created_at is not the mark's is
// another chat (erased and created again under its id): it is gone, and
// its turns, episodes and facts are unindexed again (the caller takes the
// id's points out).
func (s *Store) markTurns(ctx context.Context, marks []memory.Mark) ([]memory.ChatKey, error) {
	var (
		tenants, chats []string
		seqs           []int64
		forgotten      []bool
		created        []*time.Time
	)
	for _, m := range marks {
		at := createdArg(m)
		add := func(q int64, f bool) {
			tenants, chats, seqs = append(tenants, m.Chat.Tenant), append(chats, m.Chat.ChatID), append(seqs, q)
			forgotten, created = append(forgotten, f), append(created, at)
		}
		add(0, false)
		for _, q := range m.Seqs {
			add(q, false)
		}
		for _, q := range m.Forgotten {
			add(q, true)
		}
	}
	rows, err := s.pool.Query(ctx, `WITH u AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[], $5::timestamptz[])
				AS u(tenant, chat_id, seq, forgotten, created)),
		same AS (SELECT DISTINCT c.id, u.tenant, u.chat_id FROM chats c JOIN u ON c.tenant = u.tenant AND c.chat_id = u.chat_id
			WHERE u.created IS NULL OR c.created_at = u.created),
		marked AS (UPDATE messages m SET indexed = true FROM chats c, u
			WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND (u.created IS NULL OR c.created_at = u.created)
				AND m.chat = c.id AND m.seq = u.seq AND NOT m.indexed AND m.deleted = u.forgotten),
		reborn AS (UPDATE messages m SET indexed = false FROM chats c, u
			WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND u.created IS NOT NULL AND c.created_at <> u.created
				AND m.chat = c.id AND m.indexed),
		reborn_episodes AS (UPDATE episodes e SET indexed = false FROM chats c, u
			WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND u.created IS NOT NULL AND c.created_at <> u.created
				AND e.chat = c.id AND e.indexed),
		reborn_facts AS (UPDATE facts f SET indexed = false FROM chats c, u
			WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND u.created IS NOT NULL AND c.created_at <> u.created
				AND f.chat = c.id AND f.indexed)
		SELECT DISTINCT u.tenant, u.chat_id FROM u
		WHERE NOT EXISTS (SELECT 1 FROM same WHERE same.tenant = u.tenant AND same.chat_id = u.chat_id)`,
		tenants, chats, seqs, forgotten, created)
	if err != nil {
		return nil, err
	}
	return collectKeys(rows)
}

// markItems marks episodes or facts indexed by id and lists the chats not
// found, in one statement: a chat with no ids is checked through id ”,
// which no item has.
func (s *Store) markItems(ctx context.Context, kind memory.WorkKind, marks []memory.Mark) ([]memory.ChatKey, error) {
	var tenants, chats, ids []string
	for _, m := range marks {
		for _, id := range append([]string{""}, m.IDs...) {
			tenants, chats, ids = append(tenants, m.Chat.Tenant), append(chats, m.Chat.ChatID), append(ids, id)
		}
	}
	table := itemTables[kind]
	rows, err := s.pool.Query(ctx, `WITH u AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS u(tenant, chat_id, id)),
		marked AS (UPDATE `+table+` i SET indexed = true FROM chats c, u
			WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND i.chat = c.id AND i.id::text = u.id AND NOT i.indexed)
		SELECT DISTINCT u.tenant, u.chat_id FROM u
		WHERE NOT EXISTS (SELECT 1 FROM chats c WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id)`,
		tenants, chats, ids)
	if err != nil {
		return nil, err
	}
	return collectKeys(rows)
}

func collectKeys(rows pgx.Rows) ([]memory.ChatKey, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (memory.ChatKey, error) {
		var k memory.ChatKey
		err := r.Scan(&k.Tenant, &k.ChatID)
		return k, err
	})
}

// createdArg is the mark's Created as a parameter (NULL: not checked).
func createdArg(m memory.Mark) *time.Time {
	if m.Created.IsZero() {
		return nil
	}
	t := m.Created
	return &t
}

// markDrawn moves facts cursors forward in one statement.
func (s *Store) markDrawn(ctx context.Context, marks []memory.Mark) error {
	tenants, chats, seqs, created := make([]string, len(marks)), make([]string, len(marks)), make([]int64, len(marks)), make([]*time.Time, len(marks))
	for i, m := range marks {
		tenants[i], chats[i], seqs[i], created[i] = m.Chat.Tenant, m.Chat.ChatID, m.ToSeq, createdArg(m)
	}
	_, err := s.pool.Exec(ctx, `UPDATE chats c SET facts_cursor = LEAST(u.seq, c.last_seq)
		FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[]) AS u(tenant, chat_id, seq, created)
		WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND (u.created IS NULL OR c.created_at = u.created)
			AND c.facts_cursor < LEAST(u.seq, c.last_seq)`, tenants, chats, seqs, created)
	return err
}

// eachMark writes the marks of MergeProfile (what the profile merged of a
// chat moves forward, or with ToSeq 0 is forgotten) or SweepDeletions (the
// forget rows of the seqs go).
func eachMark(ctx context.Context, tx pgx.Tx, kind memory.WorkKind, marks []memory.Mark) error {
	for _, m := range marks {
		var err error
		switch {
		case kind == memory.SweepDeletions:
			_, err = tx.Exec(ctx, `DELETE FROM forgets WHERE seq = ANY($3)
				AND chat = (SELECT id FROM chats WHERE tenant = $1 AND chat_id = $2)`, m.Chat.Tenant, m.Chat.ChatID, m.Seqs)
		case m.ToSeq == 0:
			_, err = tx.Exec(ctx, `DELETE FROM profile_merged WHERE chat = (SELECT id FROM chats WHERE tenant = $1 AND chat_id = $2)`,
				m.Chat.Tenant, m.Chat.ChatID)
		default:
			_, err = tx.Exec(ctx, `INSERT INTO profile_merged (chat, merged_to) SELECT id, $3 FROM chats WHERE tenant = $1 AND chat_id = $2
				ON CONFLICT (chat) DO UPDATE SET merged_to = GREATEST(profile_merged.merged_to, excluded.merged_to)`,
				m.Chat.Tenant, m.Chat.ChatID, m.ToSeq)
		}
		if err != nil {
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
		return fmt.Errorf("postgres: %w", kind.Unknown("reset"))
	}
	if _, err := s.pool.Exec(ctx, q); err != nil {
		return wrap("reset "+string(kind), err)
	}
	return nil
}
