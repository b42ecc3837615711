package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

const chatCols = `id, tenant, chat_id, user_id, agent, last_seq, summary_cursor, created_at, updated_at, summary_dirty`

const msgCols = `seq, id, role, name, content, created_at, metadata, deleted`

const summaryCols = `id, parent_id, depth, from_seq, to_seq, token_count, summary, created_at`

// chatOf is the row id of the chat named by the first two parameters
// (tenant, chat_id): NULL when there is none, so the statement matches no
// row and the caller checks whether the chat exists only then.
const chatOf = `(SELECT id FROM chats WHERE tenant = ? AND chat_id = ?)`

// limitParam is a bound LIMIT. Not a bare "?": SQLite marks a statement
// whose LIMIT is a bare parameter for re-preparation whenever that
// parameter is bound (it plans with the value), which would parse the
// statement again on every call and defeat preparing it once.
const limitParam = `CAST(? AS INTEGER)`

// readStmts are the statements of the read pool (Store.r).
type readStmts struct {
	chat, chatPK *sql.Stmt
	// head is the chat's row id and its head record's id (NULL: none);
	// headRecord loads the newest record of a chat row id.
	head, headRecord, chain                *sql.Stmt
	clean                                  *sql.Stmt // CleanSummary's record
	messages, messagesBySeq, unindexedMsgs *sql.Stmt
	summaryWork, unindexedChats            *sql.Stmt
	profile, profileVersion                *sql.Stmt
}

func (r *readStmts) list() []stmtSQL {
	return []stmtSQL{
		{&r.chat, `SELECT ` + chatCols + `, (SELECT s.id FROM conversation_summaries s
			WHERE s.chat = c.id ORDER BY s.depth DESC LIMIT 1),
			(SELECT p.version FROM profiles p WHERE p.tenant = c.tenant AND p.user_id = c.user_id)
			FROM chats c WHERE c.tenant = ? AND c.chat_id = ?`},
		{&r.chatPK, `SELECT id FROM chats WHERE tenant = ? AND chat_id = ?`},
		{&r.head, `SELECT c.id, (SELECT s.id FROM conversation_summaries s
			WHERE s.chat = c.id ORDER BY s.depth DESC LIMIT 1)
			FROM chats c WHERE c.tenant = ? AND c.chat_id = ?`},
		{&r.headRecord, `SELECT ` + summaryCols + ` FROM conversation_summaries
			WHERE chat = ? ORDER BY depth DESC LIMIT 1`},
		{&r.chain, `SELECT ` + summaryCols + ` FROM conversation_summaries WHERE chat = ? ORDER BY depth DESC`},
		// The newest record below the first one reaching dirty_from (all
		// of them when none does; the head when the chat is clean). A
		// record names the turns it added in from_seq..to_seq; one that
		// added none (0..0) is judged by its summary's coverage.
		{&r.clean, `SELECT ` + prefixed("s.", summaryCols) + ` FROM chats c JOIN conversation_summaries s ON s.chat = c.id
			WHERE c.tenant = ? AND c.chat_id = ? AND (c.summary_dirty <= 0 OR s.depth < COALESCE((SELECT min(d.depth)
				FROM conversation_summaries d WHERE d.chat = c.id AND (d.to_seq >= c.dirty_from
					OR (d.to_seq = 0 AND json_extract(d.summary, '$.covered_to_seq') >= c.dirty_from))), 1 << 62))
			ORDER BY s.depth DESC LIMIT 1`},
		{&r.messages, `SELECT ` + msgCols + ` FROM messages
			WHERE chat = ` + chatOf + ` AND seq > ? ORDER BY seq LIMIT ` + limitParam},
		{&r.messagesBySeq, `SELECT ` + msgCols + ` FROM messages
			WHERE chat = ` + chatOf + ` AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq`},
		{&r.unindexedMsgs, `SELECT ` + msgCols + ` FROM messages
			WHERE chat = ` + chatOf + ` AND indexed = 0 ORDER BY seq LIMIT ` + limitParam},
		{&r.summaryWork, `SELECT ` + chatCols + ` FROM chats
			WHERE last_seq - summary_cursor >= ? OR summary_dirty > 0
			ORDER BY COALESCE(summary_pending_since, updated_at), id LIMIT ` + limitParam},
		{&r.unindexedChats, `SELECT ` + chatCols + `, 0 FROM chats
			WHERE id IN (SELECT DISTINCT chat FROM messages WHERE indexed = 0)
			ORDER BY updated_at, id LIMIT ` + limitParam},
		{&r.profile, `SELECT state, version FROM profiles WHERE tenant = ? AND user_id = ?`},
		{&r.profileVersion, `SELECT version FROM profiles WHERE tenant = ? AND user_id = ?`},
	}
}

func (r *readStmts) close() error { return closeAll(r.list()) }

// writeStmts are the statements of the writer (Store.w); transactions use
// them through tx.StmtContext, which reuses the statement already prepared
// on the writer's single connection.
type writeStmts struct {
	chat, chatPK, insertChat, updateChat  *sql.Stmt
	existing, insertMsg                   *sql.Stmt
	headID, insertSummary, moveCursor     *sql.Stmt
	markIndexed, chatCreated, unindexChat *sql.Stmt
	// unindexChatItems: a re-created chat's episodes and facts (the
	// indexer takes the chat id's points out).
	unindexChatEpisodes, unindexChatFacts *sql.Stmt
	tryLease, releaseLease, deleteChat    *sql.Stmt
	renewLease                            *sql.Stmt
}

func (w *writeStmts) list() []stmtSQL {
	return []stmtSQL{
		{&w.chat, `SELECT ` + chatCols + ` FROM chats WHERE tenant = ? AND chat_id = ?`},
		{&w.chatPK, `SELECT id FROM chats WHERE tenant = ? AND chat_id = ?`},
		{&w.insertChat, `INSERT INTO chats (tenant, chat_id, user_id, agent, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)`},
		{&w.updateChat, `UPDATE chats SET last_seq = ?, updated_at = ?,
			summary_pending_since = COALESCE(summary_pending_since, ?) WHERE id = ?`},
		{&w.existing, `SELECT id, seq FROM messages
			WHERE chat = ? AND id IN (SELECT value FROM json_each(?))`},
		{&w.insertMsg, `INSERT INTO messages
			(chat, seq, id, role, name, content, created_at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.headID, `SELECT id, depth FROM conversation_summaries
			WHERE chat = ? ORDER BY depth DESC LIMIT 1`},
		{&w.insertSummary, `INSERT INTO conversation_summaries
			(id, chat, parent_id, depth, from_seq, to_seq, token_count, model, prompt_version, summary, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.moveCursor, `UPDATE chats SET summary_cursor = ?,
			summary_pending_since = CASE WHEN ? >= last_seq THEN NULL ELSE summary_pending_since END
			WHERE id = ?`},
		{&w.markIndexed, `UPDATE messages SET indexed = 1
			WHERE chat = ? AND indexed = 0 AND deleted = ? AND seq IN (SELECT value FROM json_each(?))`},
		{&w.chatCreated, `SELECT id, created_at FROM chats WHERE tenant = ? AND chat_id = ?`},
		{&w.unindexChat, `UPDATE messages SET indexed = 0 WHERE chat = ? AND indexed = 1`},
		{&w.unindexChatEpisodes, `UPDATE episodes SET indexed = 0 WHERE chat = ? AND indexed = 1`},
		{&w.unindexChatFacts, `UPDATE facts SET indexed = 0 WHERE chat = ? AND indexed = 1`},
		{&w.tryLease, `INSERT INTO leases (chat, kind, owner, expires_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (chat, kind) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
			WHERE leases.expires_at <= ?`},
		{&w.renewLease, `UPDATE leases SET expires_at = ?
			WHERE kind = ? AND owner = ? AND expires_at > ? AND chat = ` + chatOf},
		{&w.releaseLease, `DELETE FROM leases WHERE kind = ? AND owner = ?
			AND chat = ` + chatOf},
		{&w.deleteChat, `DELETE FROM chats WHERE tenant = ? AND chat_id = ?`},
	}
}

func (w *writeStmts) close() error { return closeAll(w.list()) }

type stmtSQL struct {
	dst   **sql.Stmt
	query string
}

// prepare prepares the read and write statements (after migrate: the
// tables must exist).
func (s *Store) prepare(ctx context.Context) error {
	for _, set := range []struct {
		db   *sql.DB
		list []stmtSQL
	}{{s.r, s.rs.list()}, {s.w, s.ws.list()}} {
		for _, st := range set.list {
			p, err := set.db.PrepareContext(ctx, st.query)
			if err != nil {
				return fmt.Errorf("sqlite: prepare %q: %w", st.query, err)
			}
			*st.dst = p
		}
	}
	return nil
}

// closeAll closes the prepared statements of list (nil ones are skipped;
// closing twice is harmless).
func closeAll(list []stmtSQL) error {
	var err error
	for _, st := range list {
		if *st.dst != nil {
			err = errors.Join(err, (*st.dst).Close())
		}
	}
	return err
}

// queryStmts holds the read pool's other queries, each prepared the first
// time it is sent: the background's listings (chats with unindexed facts or
// episodes, their facts and episodes, profile work) run on every pass of
// the workers, and SQLite parsing them each time was a visible share of
// the indexer's CPU under a stream of appends. The texts are the store's
// own constants, so the set is bounded.
type queryStmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func (q *queryStmts) get(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if st, ok := q.m[query]; ok {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if q.m == nil {
		q.m = make(map[string]*sql.Stmt)
	}
	q.m[query] = st
	return st, nil
}

func (q *queryStmts) close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	var err error
	for k, st := range q.m {
		err = errors.Join(err, st.Close())
		delete(q.m, k)
	}
	return err
}

// query runs a read query, prepared once (queryStmts).
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.qs.get(ctx, s.r, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}
