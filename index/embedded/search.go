// Search: the hybrid query over the in-memory vectors, and the hits
// payload read from the file.

package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// scope returns the chats a filter can touch. Caller holds mu.
func (ix *Index) scope(f rag.Filter) []*chat {
	tn := ix.tenants[f.Tenant]
	if tn == nil {
		return nil
	}
	if len(f.ChatIDs) > 0 {
		out := make([]*chat, 0, len(f.ChatIDs))
		for _, id := range f.ChatIDs {
			if c := tn.chats[id]; c != nil && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		return out
	}
	out := make([]*chat, 0, len(tn.chats))
	for _, c := range tn.chats {
		out = append(out, c)
	}
	return out
}

// matcher applies a filter's user, agent, kinds, time range, seq range,
// citing seq and item ids to points, inside the scan (before top-k).
type matcher struct {
	user, agent            uint32
	anyUser, anyAgent      bool
	none                   bool // a label no point has: nothing matches
	turns, episodes, facts bool // kinds wanted
	since, until           int64
	timed                  bool // since or until set
	fromSeq, toSeq         int64
	citing                 int64
	ids                    map[string]bool // nil: any
}

// matcher resolves f. Caller holds mu.
func (ix *Index) matcher(f rag.Filter) matcher {
	all := len(f.Kinds) == 0
	m := matcher{anyUser: f.UserID == "", anyAgent: f.Agent == "", turns: all, episodes: all, facts: all,
		since: math.MinInt64 + 1, until: math.MaxInt64, fromSeq: f.FromSeq, toSeq: f.ToSeq, citing: f.CitingSeq}
	for _, k := range f.Kinds {
		m.turns = m.turns || k == memory.KindTurn || k == ""
		m.episodes = m.episodes || k == memory.KindEpisode
		m.facts = m.facts || k == memory.KindFact
	}
	if len(f.ItemIDs) > 0 {
		m.ids = make(map[string]bool, len(f.ItemIDs))
		for _, id := range f.ItemIDs {
			m.ids[id] = true
		}
	}
	if !f.Since.IsZero() {
		m.since, m.timed = f.Since.Unix(), true
	}
	if !f.Until.IsZero() {
		m.until, m.timed = f.Until.Unix(), true
	}
	var ok bool
	if !m.anyUser {
		if m.user, ok = ix.labels.lookup(f.UserID); !ok {
			m.none = true
		}
	}
	if !m.anyAgent {
		if m.agent, ok = ix.labels.lookup(f.Agent); !ok {
			m.none = true
		}
	}
	return m
}

// all: every point of a chat in scope matches.
func (m *matcher) all() bool {
	return m.anyUser && m.anyAgent && m.turns && m.episodes && m.facts && !m.timed && m.fromSeq == 0 && m.toSeq == 0 &&
		m.citing == 0 && m.ids == nil
}

// skips reports that no point of c can match: the chat's points all have
// another user or agent than the filter's.
func (m *matcher) skips(c *chat) bool {
	return !m.anyUser && c.users == nil && c.user != m.user || !m.anyAgent && c.agents == nil && c.agent != m.agent
}

// takes reports that every point of c matches: the filter asks for no
// more than a user and an agent, which all of c's points have.
func (m *matcher) takes(c *chat) bool {
	return m.turns && m.episodes && m.facts && !m.timed && m.fromSeq == 0 && m.toSeq == 0 && m.citing == 0 && m.ids == nil &&
		(m.anyUser || c.users == nil && c.user == m.user) && (m.anyAgent || c.agents == nil && c.agent == m.agent)
}

func (m *matcher) ok(c *chat, slot int) bool {
	if !(m.anyUser || c.userOf(slot) == m.user) || !(m.anyAgent || c.agentOf(slot) == m.agent) {
		return false
	}
	key := c.seqs[slot]
	kind := keyKind(key)
	var it *item
	seq := key & maxSeq
	switch kind {
	case kindTurn:
		if !m.turns || m.citing > 0 || m.ids != nil {
			return false
		}
	case kindEpisode:
		if !m.episodes || m.citing > 0 {
			return false
		}
		seq = -key
	case kindFact:
		if !m.facts {
			return false
		}
	}
	if kind != kindTurn {
		it = c.items[key]
		seq = it.firstSeq(key)
		if m.ids != nil && !m.ids[it.id] || m.citing > 0 && !slices.Contains(it.seqs, m.citing) {
			return false
		}
	}
	if m.fromSeq > 0 && seq < m.fromSeq || m.toSeq > 0 && seq > m.toSeq {
		return false
	}
	if !m.timed {
		return true
	}
	start := c.times.at(slot)
	end := start
	if kind == kindEpisode {
		end = it.end
	}
	return start != noTime && end != noTime && start <= m.until && end >= m.since
}

// ref names a point while mu is held.
type ref struct {
	c    *chat
	slot int32
}

type scored struct {
	ref
	score float32
}

// cmpScored orders candidates by score, then by (chat, seq) so ties are stable.
func cmpScored(a, b scored) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	if a.c != b.c {
		if c := strings.Compare(a.c.id, b.c.id); c != 0 {
			return c
		}
	}
	sa, sb := a.c.seqs[a.slot], b.c.seqs[b.slot]
	switch {
	case sa < sb:
		return -1
	case sa > sb:
		return 1
	}
	return 0
}

// Query answers a hybrid query: dense candidates (quantised cosine, those
// below ScoreThreshold dropped when it is > 0, top Prefetch) and sparse
// candidates (points sharing a query term, BM25 weight × IDF, top
// Prefetch), fused by RRF with 1-based ranks. The payload of the fused hits
// is then read from the file; a hit deleted meanwhile is left out.
func (ix *Index) Query(ctx context.Context, q rag.Query) ([]rag.Hit, error) {
	if q.Filter.Tenant == "" {
		return nil, errors.New("embedded index: query without tenant")
	}
	if len(q.Dense) != 0 && len(q.Dense) != ix.dim {
		return nil, fmt.Errorf("%w: query vector has %d dimensions, the index %d", rag.ErrDimensionMismatch, len(q.Dense), ix.dim)
	}
	if len(q.Sparse.Indices) != len(q.Sparse.Values) {
		return nil, errors.New("embedded index: query sparse vector has mismatched indices and values")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q.Limit <= 0 {
		return nil, nil
	}
	prefetch := q.Candidates()
	var qv []int8
	var qscale float32
	if len(q.Dense) > 0 {
		qv = make([]int8, ix.dim)
		qscale = quantise(q.Dense, qv)
	}
	var dq *denseQuery
	if len(qv) > 0 {
		dq = &denseQuery{qv: qv, qscale: qscale, threshold: q.ScoreThreshold}
	}
	qs := canonSparse(q.Sparse)
	hits, approx, err := ix.rank(q, dq, qs, prefetch)
	if err == nil && approx && len(hits.hits) < q.Limit {
		// Fewer hits than Limit promise every qualifying point (rag.Query):
		// only the exact scan can keep that promise.
		dq.exact = true
		hits, _, err = ix.rank(q, dq, qs, prefetch)
	}
	if err != nil || len(hits.hits) == 0 {
		return nil, err
	}
	return ix.fill(ctx, q.Filter.Tenant, hits)
}

// denseQuery is a query's dense side: its quantised vector and scale, the
// score threshold, whether it must be exact, and its sketch query (built
// when a chat first uses it).
type denseQuery struct {
	qv        []int8
	qscale    float32
	threshold float32
	exact     bool
	sketch    *sketchQuery
}

func (dq *denseQuery) sketchQuery() *sketchQuery {
	if dq.sketch == nil {
		dq.sketch = newSketchQuery(dq.qv)
	}
	return dq.sketch
}

// rank scores the points in scope and returns the fused hits without
// their file payload (role, content, created_at), and whether the dense
// side of some chat was approximate (the sketch's candidates).
func (ix *Index) rank(q rag.Query, dq *denseQuery, qs rag.SparseVector, prefetch int) (_ ranked, approx bool, _ error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return ranked{}, false, ErrClosed
	}
	m := ix.matcher(q.Filter)
	if m.none {
		return ranked{}, false, nil
	}
	chats := ix.scope(q.Filter)

	// The heaps never hold more than the points in scope: a chat's query
	// asked for hundreds and sized them for that on every request.
	points := 0
	for _, c := range chats {
		points += len(c.seqs)
	}
	var dtop, stop *topKHeap
	var sq *sparseQuery
	if dq != nil {
		dtop = newTopK(prefetch, points)
	}
	if len(qs.Indices) > 0 {
		stop = newTopK(prefetch, points)
		w := make([]float32, len(qs.Indices))
		for k, term := range qs.Indices {
			w[k] = qs.Values[k] * ix.idf(term)
		}
		sq = newSparseQuery(qs.Indices, w)
	}
	// A one-chat query keeps the chat's arena that the sparse scan read,
	// for the hits' term ids (fuse); others read those per hit.
	var arena *termBuf
	defer func() { ix.tf.put(arena) }()
	for _, c := range chats {
		if !m.skips(c) {
			a, b, err := ix.scan(c, &m, dq, sq, dtop, stop, len(chats) == 1)
			if err != nil {
				return ranked{}, false, err
			}
			approx, arena = approx || a, b
		}
	}
	var dense, sparse []scored
	if dtop != nil {
		dense = dtop.sorted()
	}
	if stop != nil {
		sparse = stop.sorted()
	}
	r, err := ix.fuse(q.Filter.Tenant, dense, sparse, q.Limit, arena)
	return r, approx, err
}

// scan scores chat c's points that m accepts: dense into dtop (when dq is
// set; below threshold dropped when it is > 0), sparse into stop (when sq
// is set; points sharing no term left out). The dense side is exact, or,
// for a chat past sketchFrom with at least approxRatio times the
// candidates it would rescore, the sketch's candidates rescored (approx,
// sketch.go); the sparse side of a chat past postingsFrom comes from its
// postings (postings.go), else from a scan of its arena, which is
// returned when keep (nil otherwise, or when not read). A warm chat
// (resident.go) builds its rows and postings whatever its size, and any
// chat uses those in RAM. The matcher is skipped when it accepts every
// point. Caller holds mu.
func (ix *Index) scan(c *chat, m *matcher, dq *denseQuery, sq *sparseQuery, dtop, stop *topKHeap, keep bool) (approx bool, arena *termBuf, _ error) {
	all := m.takes(c)
	build := all && ix.res.warm(c) >= warmBuild
	rows, post := ix.inRAM(c)
	if dtop != nil {
		k := candidates(dtop.k)
		sketch := !dq.exact && ix.sketchFrom > 0 && c.len() >= max(ix.sketchFrom, approxRatio*k)
		if rows == nil && (sketch || build) {
			rows = ix.rowsOf(c)
		}
		if approx = sketch && rows != nil; approx {
			ix.sketchDense(c, rows, m, all, dq, k, dtop)
		} else if err := ix.exactDense(c, rows, m, all, dq, dtop); err != nil {
			return false, nil, err
		}
	}
	if sq == nil {
		return approx, nil, nil
	}
	if post == nil && ix.postingsFrom > 0 && (c.len() >= ix.postingsFrom || build) {
		post = ix.postingsOf(c)
	}
	if post != nil {
		sparsePostings(c, post, m, all, sq, stop)
		return approx, nil, nil
	}
	b, err := ix.tf.all(c.sp)
	if err != nil {
		return false, nil, err
	}
	for i := range c.seqs {
		if !all && !m.ok(c, i) {
			continue
		}
		di, dw := c.terms(b, i)
		if s, hit := sq.score(di, dw); hit && stop.admits(s) {
			stop.push(scored{ref{c, int32(i)}, s})
		}
	}
	if !keep {
		ix.tf.put(b)
		b = nil
	}
	return approx, b, nil
}

// exactDense scores every point of c that m accepts (all: every one)
// into dtop: from c's rows when they are in RAM (nil: not), else from
// all of c's vectors, in one read. Caller holds mu.
func (ix *Index) exactDense(c *chat, rows []int8, m *matcher, all bool, dq *denseQuery, dtop *topKHeap) error {
	vecs, vpos, dim := rows, []uint32(nil), ix.dim
	if rows == nil {
		bp, err := ix.vf.read(c.vecs)
		if err != nil {
			return err
		}
		defer ix.vf.put(bp)
		vecs, vpos = asInt8(*bp), c.vpos
	}
	for i := range c.seqs {
		if !all && !m.ok(c, i) {
			continue
		}
		p := i * dim
		if vpos != nil {
			p = int(vpos[i]) * dim
		}
		s := float32(dotI8(dq.qv, vecs[p:p+dim])) * dq.qscale * c.scales[i]
		if (dq.threshold <= 0 || s >= dq.threshold) && dtop.admits(s) {
			dtop.push(scored{ref{c, int32(i)}, s})
		}
	}
	return nil
}

// idf is Qdrant's IDF modifier: ln(1 + (N - n + 0.5)/(n + 0.5)).
func (ix *Index) idf(term uint32) float32 {
	n := float64(ix.df[term])
	return float32(math.Log(1 + (float64(ix.n)-n+0.5)/(n+0.5)))
}

// topKHeap keeps the k best candidates in a heap whose root is the worst kept.
type topKHeap struct {
	k int
	h []scored
}

// newTopK keeps the k best of at most n candidates.
func newTopK(k, n int) *topKHeap { return &topKHeap{k: k, h: make([]scored, 0, min(k, n, 256))} }

// worse reports whether a ranks after b.
func worse(a, b scored) bool { return cmpScored(a, b) > 0 }

// admits reports whether a candidate scoring s may enter: the heap is not
// full or s is not below its worst (a tie is settled by push).
func (t *topKHeap) admits(s float32) bool { return len(t.h) < t.k || t.k > 0 && s >= t.h[0].score }

func (t *topKHeap) push(x scored) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if t.k == 0 || !worse(t.h[0], x) {
		return
	}
	t.h[0] = x
	for i := 0; ; { // sift down
		l, r, w := 2*i+1, 2*i+2, i
		if l < len(t.h) && worse(t.h[l], t.h[w]) {
			w = l
		}
		if r < len(t.h) && worse(t.h[r], t.h[w]) {
			w = r
		}
		if w == i {
			break
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

func (t *topKHeap) sorted() []scored {
	slices.SortFunc(t.h, cmpScored)
	return t.h
}

// ranked are fused hits whose payload is still to be read, and beside
// each its key and whether it is a passage of a turn split into several
// (its offsets are then read from the file too). fill completes the hits
// in place: a rag.Hit is ~350 bytes, and a query returns hundreds.
type ranked struct {
	hits []rag.Hit
	keys []hitKey
}

type hitKey struct {
	key   int64
	split bool
}

// fusedScore is a candidate's RRF score over both lists, its cosine
// similarity (0 when only the sparse side ranked it) and its BM25 score
// (0 when only the dense side did).
type fusedScore struct{ rrf, cos, sp float32 }

// fusion accumulates the candidates' fused scores: in a slice by slot when
// every candidate is of one chat (a chat-scoped query, the common case: no
// hashing, one small allocation), in a map otherwise.
type fusion struct {
	one   *chat
	slots []fusedScore // by slot of one; rrf > 0 marks a candidate
	seen  []int32      // the candidates' slots, in the order added
	m     map[ref]fusedScore
}

func newFusion(dense, sparse []scored) *fusion {
	n := len(dense) + len(sparse)
	var one *chat
	for _, l := range [2][]scored{dense, sparse} {
		for _, s := range l {
			if one == nil {
				one = s.c
			} else if s.c != one {
				return &fusion{m: make(map[ref]fusedScore, n)}
			}
		}
	}
	if one == nil {
		return &fusion{m: map[ref]fusedScore{}}
	}
	return &fusion{one: one, slots: make([]fusedScore, len(one.seqs)), seen: make([]int32, 0, n)}
}

// add adds rrf to r's score; cos and sp, when not 0, are its dense
// similarity and its BM25 score.
func (f *fusion) add(r ref, rrf, cos, sp float32) {
	if f.one == nil {
		a := f.m[r]
		a.merge(rrf, cos, sp)
		f.m[r] = a
		return
	}
	a := &f.slots[r.slot]
	if a.rrf == 0 {
		f.seen = append(f.seen, r.slot)
	}
	a.merge(rrf, cos, sp)
}

func (a *fusedScore) merge(rrf, cos, sp float32) {
	a.rrf += rrf
	if cos != 0 {
		a.cos = cos
	}
	if sp != 0 {
		a.sp = sp
	}
}

func (f *fusion) get(r ref) fusedScore {
	if f.one == nil {
		return f.m[r]
	}
	return f.slots[r.slot]
}

func (f *fusion) each(fn func(ref, fusedScore)) {
	if f.one == nil {
		for r, a := range f.m {
			fn(r, a)
		}
		return
	}
	for _, slot := range f.seen {
		fn(ref{f.one, slot}, f.slots[slot])
	}
}

// fuse merges the two ranked lists by reciprocal rank fusion and returns
// the best limit as hits with their in-memory fields; arena, when not nil,
// is the arena of the one chat in scope. Caller holds mu.
func (ix *Index) fuse(tenantID string, dense, sparse []scored, limit int, arena *termBuf) (ranked, error) {
	fz := newFusion(dense, sparse)
	for r, s := range dense {
		fz.add(s.ref, 1/float32(rag.RRFK+r+1), s.score, 0)
	}
	for r, s := range sparse {
		fz.add(s.ref, 1/float32(rag.RRFK+r+1), 0, s.score)
	}
	top := newTopK(limit, len(dense)+len(sparse))
	fz.each(func(r ref, a fusedScore) { top.push(scored{r, a.rrf}) })
	fused := top.sorted()
	r := ranked{hits: make([]rag.Hit, len(fused)), keys: make([]hitKey, len(fused))}
	// The turns' term ids, copied out of the chats' arenas (which change
	// once mu is released) into one allocation.
	n := 0
	for _, s := range fused {
		if keyKind(s.c.seqs[s.slot]) == kindTurn {
			n += int(s.c.spLen[s.slot])
		}
	}
	terms := make([]uint32, 0, n)
	for i, s := range fused {
		c, slot := s.c, int(s.slot)
		f, k := &r.hits[i], &r.keys[i]
		*f = rag.Hit{Point: rag.Point{Tenant: tenantID, UserID: ix.labels.str(c.userOf(slot)), ChatID: c.id,
			Agent: ix.labels.str(c.agentOf(slot))}, Score: s.score}
		fs := fz.get(s.ref)
		f.DenseScore, f.SparseScore = fs.cos, fs.sp
		k.key = c.seqs[slot]
		switch keyKind(k.key) {
		case kindTurn:
			o, n := c.spOff[slot], int(c.spLen[slot])
			terms = terms[:len(terms)+n]
			f.Terms = terms[len(terms)-n : len(terms) : len(terms)]
			if arena != nil {
				copy(f.Terms, arena.ids[o:])
			} else if err := ix.tf.readIDs(c.sp, o, f.Terms); err != nil {
				return ranked{}, err
			}
			f.Seq, f.Passage = turnOf(k.key)
			_, more := slices.BinarySearch(c.seqs, turnKey(f.Seq, 1))
			k.split = f.Passage > 0 || more
		case kindEpisode:
			it := c.items[k.key]
			f.Kind, f.Seq, f.FromSeq, f.EpisodeID = memory.KindEpisode, -k.key, -k.key, it.id
		case kindFact:
			it := c.items[k.key]
			f.Kind, f.FactID, f.Seqs, f.Superseded = memory.KindFact, it.id, slices.Clone(it.seqs), it.superseded
			f.Seq = it.seqs[0]
		}
	}
	return r, nil
}

// fill reads role, content and created_at of hits from the file, by
// primary key (one prepared statement per chat among the hits), and drops
// the hits whose row is gone (deleted since rank).
func (ix *Index) fill(ctx context.Context, tenantID string, r ranked) ([]rag.Hit, error) {
	hits, keys := r.hits, r.keys
	got := make([]payload, len(hits))
	done := make([]bool, len(hits))
	gen := ix.payloads.getAll(func(i int) payloadKey { return payloadKey{tenantID, hits[i].ChatID, keys[i].key} }, got, done)
	var b []byte
	var pos []int // hits of the chat being read
	for i, h := range hits {
		if done[i] {
			continue
		}
		// The keys of this chat's hits, as a JSON array for json_each.
		pos = pos[:0]
		lo, hi := keys[i].key, keys[i].key
		b = append(b[:0], '[')
		for j := i; j < len(hits); j++ {
			if !done[j] && hits[j].ChatID == h.ChatID {
				done[j] = true
				pos = append(pos, j)
				lo, hi = min(lo, keys[j].key), max(hi, keys[j].key)
				if len(b) > 1 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, keys[j].key, 10)
			}
		}
		b = append(b, ']')
		if err := ix.readChat(ctx, gen, tenantID, h.ChatID, r, pos, lo, hi, b, got); err != nil {
			return nil, err
		}
	}
	if err := ix.readExtras(ctx, gen, tenantID, r, got); err != nil {
		return nil, err
	}
	out := hits[:0] // in place: out never passes i
	for i := range hits {
		p := got[i]
		if !p.ok {
			continue
		}
		h := &hits[i]
		h.Role, h.Content = p.role, p.content
		if p.created != zeroTime {
			h.CreatedAt = time.Unix(0, p.created).UTC()
		}
		var err error
		switch keyKind(keys[i].key) {
		case kindTurn:
			err = ix.passageFields(ctx, gen, tenantID, keys[i], h, p)
		case kindEpisode:
			err = ix.episodeFields(ctx, gen, tenantID, keys[i].key, h, p)
		case kindFact:
			h.ValidAt = h.CreatedAt
		}
		if errors.Is(err, errPointGone) {
			continue // deleted since its payload was read, like a row gone since rank
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *h)
	}
	return out, nil
}

// readChat reads the payloads of one chat's hits (hits[pos[k]], keys in
// [lo, hi], keys the same as a JSON array) into got and the cache. It
// walks the key range when the hits fill at least a quarter of it, else
// seeks each hit. (Unsigned: the range of a fact's key and a turn's
// overflows int64.)
func (ix *Index) readChat(ctx context.Context, gen uint64, tenantID, chatID string, r ranked, pos []int, lo, hi int64, keys []byte, got []payload) error {
	var rows *sql.Rows
	var err error
	if uint64(hi)-uint64(lo) < 4*uint64(len(pos)) {
		mask := make([]byte, hi-lo+1)
		for _, j := range pos {
			mask[r.keys[j].key-lo] = 1
		}
		rows, err = ix.readRange.QueryContext(ctx, tenantID, chatID, lo, hi, mask)
	} else {
		rows, err = ix.readSeek.QueryContext(ctx, tenantID, chatID, string(keys))
	}
	if err != nil {
		return ix.readErr(err)
	}
	defer rows.Close()
	var role sql.RawBytes
	for rows.Next() {
		var key int64
		var p payload
		if err := rows.Scan(&key, &role, &p.content, &p.created); err != nil {
			return ix.readErr(err)
		}
		for _, j := range pos {
			if r.keys[j].key == key {
				p.ok, p.role = true, internRole(role)
				got[j] = p
				ix.payloads.put(gen, payloadKey{tenantID, r.hits[j].ChatID, key}, p)
				break
			}
		}
	}
	if err := rows.Err(); err != nil {
		return ix.readErr(err)
	}
	return nil
}

// readExtras reads the episode and passage fields of the hits that need
// them and whose payload lacks them, one statement per chat (a long
// chat's hits are often passages of split turns: one read each cost 8% of
// a query at 10,000 turns). A row gone meanwhile is left to
// passageFields and episodeFields, which drop its hit.
func (ix *Index) readExtras(ctx context.Context, gen uint64, tenantID string, r ranked, got []payload) error {
	var want []int // hits, grouped by chat below
	for i, k := range r.keys {
		p := &got[i]
		if p.ok && (keyKind(k.key) == kindTurn && k.split && !p.passage || keyKind(k.key) == kindEpisode && !p.episode) {
			want = append(want, i)
		}
	}
	if len(want) < 2 {
		return nil // one read either way
	}
	var b []byte
	for len(want) > 0 {
		chatID := r.hits[want[0]].ChatID
		b = append(b[:0], '[')
		rest := want[:0:0]
		var mine []int
		for _, i := range want {
			if r.hits[i].ChatID != chatID {
				rest = append(rest, i)
				continue
			}
			if len(mine) > 0 {
				b = append(b, ',')
			}
			mine = append(mine, i)
			b = strconv.AppendInt(b, r.keys[i].key, 10)
		}
		b = append(b, ']')
		if err := ix.readExtraRows(ctx, gen, tenantID, chatID, r, mine, b, got); err != nil {
			return err
		}
		want = rest
	}
	return nil
}

func (ix *Index) readExtraRows(ctx context.Context, gen uint64, tenantID, chatID string, r ranked, pos []int, keys []byte, got []payload) error {
	rows, err := ix.readExtraSeek.QueryContext(ctx, tenantID, chatID, string(keys))
	if err != nil {
		return ix.readErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		var key int64
		var e payload
		if err := rows.Scan(&key, &e.toSeq, &e.started, &e.episodeID, &e.from, &e.turnBytes); err != nil {
			return ix.readErr(err)
		}
		for _, j := range pos {
			if r.keys[j].key == key {
				p := &got[j]
				p.toSeq, p.started, p.episodeID, p.from, p.turnBytes = e.toSeq, e.started, e.episodeID, e.from, e.turnBytes
				p.episode, p.passage = true, true
				ix.payloads.update(gen, payloadKey{tenantID, chatID, key}, *p)
				break
			}
		}
	}
	if err := rows.Err(); err != nil {
		return ix.readErr(err)
	}
	return nil
}

// passageFields sets a turn hit's passage offsets: read from the file for
// a passage of a split turn (or from the payload cache), else the whole
// content.
func (ix *Index) passageFields(ctx context.Context, gen uint64, tenantID string, f hitKey, h *rag.Hit, p payload) error {
	if !f.split {
		h.PassageTo, h.TurnBytes = len(h.Content), len(h.Content)
		return nil
	}
	if !p.passage {
		if err := ix.readExtra(ctx, tenantID, h.ChatID, f.key, &p); err != nil {
			return err
		}
		ix.payloads.update(gen, payloadKey{tenantID, h.ChatID, f.key}, p)
	}
	h.PassageFrom, h.PassageTo, h.TurnBytes = int(p.from), int(p.from)+len(h.Content), int(p.turnBytes)
	if h.TurnBytes == 0 {
		h.TurnBytes = h.PassageTo
	}
	return nil
}

// episodeFields sets an episode hit's range and dates (created_at is its
// end), from the payload cache when it has them.
func (ix *Index) episodeFields(ctx context.Context, gen uint64, tenantID string, key int64, h *rag.Hit, p payload) error {
	if !p.episode {
		if err := ix.readExtra(ctx, tenantID, h.ChatID, key, &p); err != nil {
			return err
		}
		ix.payloads.update(gen, payloadKey{tenantID, h.ChatID, key}, p)
	}
	h.EpisodeID, h.ToSeq = p.episodeID, p.toSeq
	h.EndedAt = h.CreatedAt
	if p.started != zeroTime {
		h.StartedAt = time.Unix(0, p.started).UTC()
	}
	return nil
}

// readExtra reads a point's episode and passage fields into p (both: one
// row read, whichever the caller wanted).
func (ix *Index) readExtra(ctx context.Context, tenantID, chatID string, key int64, p *payload) error {
	err := ix.readExtraStmt.QueryRowContext(ctx, tenantID, chatID, key).Scan(&p.toSeq, &p.started, &p.episodeID, &p.from, &p.turnBytes)
	if errors.Is(err, sql.ErrNoRows) {
		return errPointGone
	}
	if err != nil {
		return ix.readErr(err)
	}
	p.episode, p.passage = true, true
	return nil
}

// errPointGone: a hit's point was deleted (a forgotten turn, a rebuilt
// episode) between the read of its payload and that of its own fields; the
// hit is dropped, not the whole query failed.
var errPointGone = errors.New("embedded index: point deleted meanwhile")
