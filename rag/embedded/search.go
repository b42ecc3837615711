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

// matcher applies a filter's user, agent, kinds, time range and seq range
// to points, inside the scan (before top-k).
type matcher struct {
	user, agent       uint32
	anyUser, anyAgent bool
	none              bool // a label no point has: nothing matches
	turns, episodes   bool // kinds wanted
	since, until      int64
	timed             bool // since or until set
	fromSeq, toSeq    int64
}

// matcher resolves f. Caller holds mu.
func (ix *Index) matcher(f rag.Filter) matcher {
	m := matcher{anyUser: f.UserID == "", anyAgent: f.Agent == "", turns: len(f.Kinds) == 0, episodes: len(f.Kinds) == 0,
		since: math.MinInt64 + 1, until: math.MaxInt64, fromSeq: f.FromSeq, toSeq: f.ToSeq}
	for _, k := range f.Kinds {
		m.turns = m.turns || k == memory.KindTurn
		m.episodes = m.episodes || k == memory.KindEpisode
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
func (m matcher) all() bool {
	return m.anyUser && m.anyAgent && m.turns && m.episodes && !m.timed && m.fromSeq == 0 && m.toSeq == 0
}

func (m matcher) ok(c *chat, slot int) bool {
	if !(m.anyUser || c.users[slot] == m.user) || !(m.anyAgent || c.agents[slot] == m.agent) {
		return false
	}
	seq := c.seqs[slot]
	episode := seq < 0
	if episode && !m.episodes || !episode && !m.turns {
		return false
	}
	if episode {
		seq = -seq
	}
	if m.fromSeq > 0 && seq < m.fromSeq || m.toSeq > 0 && seq > m.toSeq {
		return false
	}
	if !m.timed {
		return true
	}
	start, end := c.times[slot], c.times[slot]
	if episode {
		end = c.ends[c.seqs[slot]]
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
	prefetch := q.Prefetch
	if prefetch <= 0 {
		prefetch = 4 * q.Limit
	}
	var qv []int8
	var qscale float32
	if len(q.Dense) > 0 {
		qv = make([]int8, ix.dim)
		qscale = quantise(q.Dense, qv)
	}
	hits, err := ix.rank(q, qv, qscale, canonSparse(q.Sparse), prefetch)
	if err != nil || len(hits) == 0 {
		return hits, err
	}
	return ix.fill(ctx, q.Filter.Tenant, hits)
}

// rank scores the points in scope and returns the fused hits without
// their file payload (role, content, created_at).
func (ix *Index) rank(q rag.Query, qv []int8, qscale float32, qs rag.SparseVector, prefetch int) ([]rag.Hit, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	m := ix.matcher(q.Filter)
	if m.none {
		return nil, nil
	}
	chats := ix.scope(q.Filter)
	dim := ix.dim

	var dense []scored
	if len(qv) > 0 {
		top := newTopK(prefetch)
		for _, c := range chats {
			for i := range c.seqs {
				if !m.ok(c, i) {
					continue
				}
				s := float32(dotI8(qv, c.dense[i*dim:(i+1)*dim])) * qscale * c.scales[i]
				if q.ScoreThreshold > 0 && s < q.ScoreThreshold {
					continue
				}
				top.push(scored{ref{c, int32(i)}, s})
			}
		}
		dense = top.sorted()
	}

	var sparse []scored
	if len(qs.Indices) > 0 {
		top := newTopK(prefetch)
		w := make([]float32, len(qs.Indices))
		for k, term := range qs.Indices {
			w[k] = qs.Values[k] * ix.idf(term)
		}
		sq := newSparseQuery(qs.Indices, w)
		for _, c := range chats {
			for i := range c.seqs {
				if !m.ok(c, i) {
					continue
				}
				di, dw := c.terms(i)
				if s, hit := sq.score(di, dw); hit {
					top.push(scored{ref{c, int32(i)}, s})
				}
			}
		}
		sparse = top.sorted()
	}

	return ix.fuse(q.Filter.Tenant, dense, sparse, q.Limit), nil
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

func newTopK(k int) *topKHeap { return &topKHeap{k: k, h: make([]scored, 0, min(k, 256))} }

// worse reports whether a ranks after b.
func worse(a, b scored) bool { return cmpScored(a, b) > 0 }

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

// fuse merges the two ranked lists by reciprocal rank fusion and returns
// the best limit as hits with their in-memory fields. Caller holds mu.
func (ix *Index) fuse(tenantID string, dense, sparse []scored, limit int) []rag.Hit {
	type acc struct {
		rrf, cos float32
	}
	m := make(map[ref]*acc, len(dense)+len(sparse))
	for r, s := range dense {
		m[s.ref] = &acc{rrf: 1 / float32(rag.RRFK+r+1), cos: s.score}
	}
	for r, s := range sparse {
		a := m[s.ref]
		if a == nil {
			a = &acc{}
			m[s.ref] = a
		}
		a.rrf += 1 / float32(rag.RRFK+r+1)
	}
	top := newTopK(limit)
	for r, a := range m {
		top.push(scored{r, a.rrf})
	}
	fused := top.sorted()
	hits := make([]rag.Hit, len(fused))
	for i, s := range fused {
		c, slot := s.c, int(s.slot)
		hits[i] = rag.Hit{Point: rag.Point{Tenant: tenantID, UserID: ix.labels.str(c.users[slot]), ChatID: c.id,
			Agent: ix.labels.str(c.agents[slot]), Seq: c.seqs[slot]}, Score: s.score, DenseScore: m[s.ref].cos}
	}
	return hits
}

// fill reads role, content and created_at of hits from the file, by
// primary key (one prepared statement per chat among the hits), and drops
// the hits whose row is gone (deleted since rank).
func (ix *Index) fill(ctx context.Context, tenantID string, hits []rag.Hit) ([]rag.Hit, error) {
	got := make([]payload, len(hits))
	done := make([]bool, len(hits))
	gen := ix.payloads.generation()
	for i, h := range hits {
		got[i], done[i] = ix.payloads.get(payloadKey{tenantID, h.ChatID, h.Seq})
	}
	var b []byte
	for i, h := range hits {
		if done[i] {
			continue
		}
		// The seqs of this chat's hits, as a JSON array for json_each.
		pos := map[int64]int{}
		lo, hi := h.Seq, h.Seq
		b = append(b[:0], '[')
		for j := i; j < len(hits); j++ {
			if !done[j] && hits[j].ChatID == h.ChatID {
				done[j] = true
				pos[hits[j].Seq] = j
				lo, hi = min(lo, hits[j].Seq), max(hi, hits[j].Seq)
				if len(b) > 1 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, hits[j].Seq, 10)
			}
		}
		b = append(b, ']')
		// Walk the seq range when the hits fill at least a quarter of it,
		// else seek each hit.
		var rows *sql.Rows
		var err error
		if hi-lo < 4*int64(len(pos)) {
			mask := make([]byte, hi-lo+1)
			for seq := range pos {
				mask[seq-lo] = 1
			}
			rows, err = ix.readRange.QueryContext(ctx, tenantID, h.ChatID, lo, hi, mask)
		} else {
			rows, err = ix.readSeek.QueryContext(ctx, tenantID, h.ChatID, string(b))
		}
		if err != nil {
			return nil, ix.readErr(err)
		}
		for rows.Next() {
			var seq int64
			var p payload
			if err := rows.Scan(&seq, &p.role, &p.content, &p.created); err != nil {
				rows.Close()
				return nil, ix.readErr(err)
			}
			if j, ok := pos[seq]; ok {
				p.ok = true
				got[j] = p
				ix.payloads.put(gen, payloadKey{tenantID, h.ChatID, seq}, p)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, ix.readErr(err)
		}
	}
	out := hits[:0]
	for i, h := range hits {
		p := got[i]
		if !p.ok {
			continue
		}
		h.Role, h.Content = p.role, p.content
		if p.created != zeroTime {
			h.CreatedAt = time.Unix(0, p.created).UTC()
		}
		if h.Seq < 0 {
			if err := ix.episodeFields(ctx, gen, tenantID, &h, p); err != nil {
				return nil, err
			}
		}
		out = append(out, h)
	}
	return out, nil
}

// episodeFields turns an episode's row (seq = -from_seq, created_at = its
// end) back into an episode point: kind, id, range and dates.
// The fields come from the payload cache when it has them.
func (ix *Index) episodeFields(ctx context.Context, gen uint64, tenantID string, h *rag.Hit, p payload) error {
	if !p.episode {
		if err := ix.rdb.QueryRowContext(ctx, readEpisode, tenantID, h.ChatID, h.Seq).Scan(&p.toSeq, &p.started, &p.episodeID); err != nil {
			return ix.readErr(err)
		}
		p.episode = true
		ix.payloads.update(gen, payloadKey{tenantID, h.ChatID, h.Seq}, p)
	}
	h.Kind, h.EpisodeID = memory.KindEpisode, p.episodeID
	h.Seq, h.FromSeq, h.ToSeq = -h.Seq, -h.Seq, p.toSeq
	h.EndedAt = h.CreatedAt
	if p.started != zeroTime {
		h.StartedAt = time.Unix(0, p.started).UTC()
	}
	return nil
}
