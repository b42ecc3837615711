package sqlite

import (
	"sync"
	"time"

	"github.com/contextd/contextd/memory"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// chatRows keeps the answers of Chat in memory, so that a read of a chat
// nothing has written since costs no query: every /v1/context starts with
// that read, and under a stream of appends each one met a reader
// connection whose page cache the last commit had dropped.
//
// An entry is used only while it is provably current:
//
//   - This process's writes are seen by a pre-update hook on the writer
//     connection. It names the chat of every row of chats,
//     conversation_summaries and profiles (the tables Chat's query reads)
//     that a transaction changes; write and tryGroup collect those names
//     (begin, end) and drop the entries just after the commit (invalidate).
//   - An append is the exception: it notes the last seq and time it wrote
//     (moved), and a row whose every change in the committed transaction
//     was an append's keeps its entry with those (carried), so the read
//     after an append costs no query.
//   - A read that raced such a commit does not put its row back: put
//     compares the epoch the read started at with the current one, which
//     every invalidation moves.
//   - Other handles on the file (other processes, or a second Open in
//     this one) are seen through a shared lock file (handles): while
//     another handle is open the cache is bypassed, and one that came and
//     went meanwhile moved the file's generation, which empties it.
type chatRows struct {
	handles handles // nil: never cached (in-memory databases)
	max     int

	mu    sync.Mutex
	m     map[memory.ChatKey]rowEntry
	byPK  map[int64]memory.ChatKey
	epoch uint64 // moved by every invalidation
	gen   uint64 // handles' generation the entries were read under
	lags  chatLags

	// pmu guards cur, the open write transaction's changes, which the
	// hook notes; stray says a change came outside any (never expected: it
	// makes the next transaction's end drop every entry).
	pmu   sync.Mutex
	cur   *changed
	stray bool
}

type rowEntry struct {
	pk  int64
	row memory.Chat
}

// changed names what a write transaction changed: chat row ids, or all
// chats (a profile, which many chats' rows carry), and the appends' new
// last seq and time for the rows they moved (moved).
type changed struct {
	pks   []int64
	all   bool
	moved []movedRow
	lags  []int64 // chats whose turns, facts or episodes changed (lagcache.go)
}

// movedRow is what an append wrote to its chat's row: the only columns of
// the cached row it changes. A chat row whose every change in a committed
// transaction is an append's keeps its cached entry with them (carry),
// so the read that follows an append — the AI SDK's append and context,
// one request — costs no query.
type movedRow struct {
	pk      int64
	lastSeq int64
	at      time.Time
}

// rowCacheSize bounds the entries: a chat row is ~200 bytes.
const rowCacheSize = 8192

func newChatRows(h handles, max int) *chatRows {
	return &chatRows{handles: h, max: max,
		m: make(map[memory.ChatKey]rowEntry), byPK: make(map[int64]memory.ChatKey), lags: newChatLags()}
}

// hook is the writer connection's pre-update hook. It runs inside the
// statement, on the goroutine that holds the writer connection.
func (r *chatRows) hook(d msqlite.SQLitePreUpdateData) {
	switch d.TableName {
	case "chats":
		if d.OldRowID == d.NewRowID {
			r.note(d.OldRowID) // once a statement: carried counts them
		} else {
			r.note(d.OldRowID, d.NewRowID)
		}
	case "conversation_summaries": // its second column is the chat's row id
		// Old and New store each value in the slice itself (not through
		// pointers in it); a value they cannot give drops every entry.
		vals := make([]any, 2)
		if d.Op != sqlite3.SQLITE_INSERT {
			r.noteChat(d.Old(vals...), vals[1])
		}
		if d.Op != sqlite3.SQLITE_DELETE {
			r.noteChat(d.New(vals...), vals[1])
		}
	case "profiles":
		r.noteAll()
	case "messages", "facts": // their first column is the chat's row id
		r.noteLag(d, 0)
	case "episodes": // its second
		r.noteLag(d, 1)
	}
}

func (r *chatRows) note(pks ...int64) {
	r.pmu.Lock()
	if r.cur != nil {
		r.cur.pks = append(r.cur.pks, pks...)
	} else {
		r.stray = true
	}
	r.pmu.Unlock()
}

func (r *chatRows) noteChat(err error, pk any) {
	if v, ok := pk.(int64); ok && err == nil {
		r.note(v)
		return
	}
	r.noteAll()
}

func (r *chatRows) noteAll() {
	r.pmu.Lock()
	if r.cur != nil {
		r.cur.all = true
	} else {
		r.stray = true
	}
	r.pmu.Unlock()
}

// moved notes that the open write transaction's last statement set chat
// pk's last_seq and updated_at (an append), and nothing else of its row.
func (r *chatRows) moved(pk, lastSeq int64, at time.Time) {
	r.pmu.Lock()
	if r.cur != nil {
		r.cur.moved = append(r.cur.moved, movedRow{pk, lastSeq, at})
	}
	r.pmu.Unlock()
}

// begin starts noting the changes of a write transaction that has just
// begun: until it ends, it alone runs statements on the writer connection.
func (r *chatRows) begin() *changed {
	c := &changed{}
	r.pmu.Lock()
	r.cur = c
	r.pmu.Unlock()
	return c
}

// end returns c's changes. It is called just before the transaction's
// commit or rollback. When database/sql rolled the transaction back on its
// own (its context ended) another one may have begun since: it has its own
// changes, so end leaves them.
func (r *chatRows) end(c *changed) changed {
	r.pmu.Lock()
	defer r.pmu.Unlock()
	if r.cur == c {
		r.cur = nil
	}
	out := *c
	if r.stray {
		out.all, r.stray = true, false
	}
	return out
}

// invalidate drops the entries c names, after the transaction that changed
// them has committed (or rolled back), and moves the epoch so that reads
// that started before cannot put their rows back. Once committed, an entry
// whose row only appends changed is carried instead (movedRow).
func (r *chatRows) invalidate(c changed, committed bool) {
	if len(c.pks) == 0 && len(c.lags) == 0 && !c.all {
		return
	}
	carry := map[int64]movedRow{}
	if committed && !c.all {
		carry = carried(c)
	}
	r.mu.Lock()
	r.epoch++
	r.lags.drop(c)
	if c.all {
		clear(r.m)
		clear(r.byPK)
	}
	for _, pk := range c.pks {
		key, ok := r.byPK[pk]
		if !ok {
			continue
		}
		if mv, ok := carry[pk]; ok {
			e := r.m[key]
			e.row.LastSeq, e.row.UpdatedAt = mv.lastSeq, mv.at
			r.m[key] = e
			continue
		}
		delete(r.m, key)
		delete(r.byPK, pk)
	}
	r.mu.Unlock()
}

// carried are the rows of c every change of which was an append's: as
// many changes noted by the hook as appends that moved the row, whose
// newest (the highest last seq: a row's appends in one transaction each
// see the one before) is what the row now holds.
func carried(c changed) map[int64]movedRow {
	if len(c.moved) == 0 {
		return nil
	}
	notes := map[int64]int{}
	for _, pk := range c.pks {
		notes[pk]++
	}
	out := map[int64]movedRow{}
	for _, mv := range c.moved {
		notes[mv.pk]--
		if cur, ok := out[mv.pk]; !ok || mv.lastSeq > cur.lastSeq {
			out[mv.pk] = mv
		}
	}
	for pk := range out {
		if notes[pk] != 0 {
			delete(out, pk) // another statement changed the row too
		}
	}
	return out
}

// get returns key's row when it is cached and current, and otherwise the
// epoch a read must start at for put to keep its row.
func (r *chatRows) get(key memory.ChatKey) (memory.Chat, uint64, bool) {
	if r.handles == nil {
		return memory.Chat{}, 0, false
	}
	gen, alone := r.handles.state()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncGenLocked(gen)
	if !alone {
		return memory.Chat{}, r.epoch, false
	}
	e, ok := r.m[key]
	return e.row, r.epoch, ok
}

// syncGenLocked empties the entries read under another generation of the
// file (another handle came and went meanwhile).
func (r *chatRows) syncGenLocked(gen uint64) {
	if gen == r.gen {
		return
	}
	clear(r.m)
	clear(r.byPK)
	r.lags.clear()
	r.gen = gen
	r.epoch++
}

// put keeps row, read by a query that started at epoch, unless a write
// may have changed it meanwhile.
func (r *chatRows) put(key memory.ChatKey, pk int64, row memory.Chat, epoch uint64) {
	if !r.lockCurrent(epoch) {
		return
	}
	defer r.mu.Unlock()
	putBounded(r.m, r.byPK, key, rowEntry{pk: pk, row: row}, func(e rowEntry) int64 { return e.pk }, r.max)
}

// lockCurrent locks r when an entry read at epoch may be kept: this is
// the only handle on the file, of the generation and epoch the read
// started at. The caller unlocks.
func (r *chatRows) lockCurrent(epoch uint64) bool {
	if r.handles == nil {
		return false
	}
	gen, alone := r.handles.state()
	r.mu.Lock()
	if !alone || gen != r.gen || epoch != r.epoch {
		r.mu.Unlock()
		return false
	}
	return true
}

// putBounded puts e (of chat row pk) under key in m and byPK, dropping
// the entry it replaces, or any one when m holds max.
func putBounded[E any](m map[memory.ChatKey]E, byPK map[int64]memory.ChatKey, key memory.ChatKey, e E, pkOf func(E) int64, max int) {
	if old, ok := m[key]; ok {
		delete(byPK, pkOf(old))
	} else if len(m) >= max {
		for k, o := range m { // any one: Go's map order is random enough
			delete(m, k)
			delete(byPK, pkOf(o))
			break
		}
	}
	m[key] = e
	byPK[pkOf(e)] = key
}

// handles tells whether this Store is the only handle open on its file, and
// the file's generation: a number every Open moves.
type handles interface {
	state() (gen uint64, alone bool)
	close() error
}
