package sqlite

import (
	"github.com/contextd/contextd/memory"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// chatLags keep the answers of ChatLag beside the chat rows (chatRows),
// under the same rules: while a job has work pending, every
// /v1/context asks how far its chat's derived memory lags, and under a
// stream of appends that was one query a request (4% of a rag_augmented
// request's CPU), though a chat's lag changes only when its turns, facts,
// episodes or row are written. The writer's pre-update hook names the
// chat of every such row change (noteLag), and the commit drops the
// chat's entry; reads that raced it keep nothing (the epoch), and another
// handle on the file bypasses or empties them, as for the rows.
type chatLags struct {
	m    map[memory.ChatKey]lagEntry
	byPK map[int64]memory.ChatKey
}

type lagEntry struct {
	pk, before int64
	lag        memory.ChatLag
}

func newChatLags() chatLags {
	return chatLags{m: map[memory.ChatKey]lagEntry{}, byPK: map[int64]memory.ChatKey{}}
}

func (l chatLags) clear() {
	clear(l.m)
	clear(l.byPK)
}

// drop forgets the lags of the chats c changed: their rows, turns, facts
// or episodes.
func (l chatLags) drop(c changed) {
	if c.all {
		l.clear()
		return
	}
	for _, ids := range [][]int64{c.pks, c.lags} {
		for _, pk := range ids {
			if key, ok := l.byPK[pk]; ok {
				delete(l.m, key)
				delete(l.byPK, pk)
			}
		}
	}
}

// noteLag notes the chat of a row of a table ChatLag reads, its row id in
// column col; a value the hook cannot give drops every lag.
func (r *chatRows) noteLag(d msqlite.SQLitePreUpdateData, col int) {
	vals := make([]any, col+1)
	var err error
	if d.Op == sqlite3.SQLITE_DELETE {
		err = d.Old(vals...)
	} else {
		err = d.New(vals...)
	}
	pk, ok := vals[col].(int64)
	r.pmu.Lock()
	switch {
	case r.cur == nil:
		r.stray = true
	case err != nil || !ok:
		r.cur.all = true
	default:
		r.cur.lags = append(r.cur.lags, pk)
	}
	r.pmu.Unlock()
}

// getLag returns the chat's lag before seq before when it is kept and
// current, and otherwise the epoch a read must start at for putLag.
func (r *chatRows) getLag(key memory.ChatKey, before int64) (memory.ChatLag, uint64, bool) {
	if r.handles == nil {
		return memory.ChatLag{}, 0, false
	}
	gen, alone := r.handles.state()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncGenLocked(gen)
	e, ok := r.lags.m[key]
	if !alone || !ok || e.before != before {
		return memory.ChatLag{}, r.epoch, false
	}
	return e.lag, r.epoch, true
}

// putLag keeps lag, read by a query that started at epoch, unless a write
// may have changed it meanwhile.
func (r *chatRows) putLag(key memory.ChatKey, pk, before int64, lag memory.ChatLag, epoch uint64) {
	if !r.lockCurrent(epoch) {
		return
	}
	defer r.mu.Unlock()
	putBounded(r.lags.m, r.lags.byPK, key, lagEntry{pk: pk, before: before, lag: lag}, func(e lagEntry) int64 { return e.pk }, r.max)
}
