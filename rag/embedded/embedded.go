// Package embedded is contextd's default vector index: no server, one SQLite
// file (modernc.org/sqlite, pure Go) for durability and an in-memory copy of
// every point for exact search.
//
// Dense search is exact cosine similarity (brute force over the chats in
// scope, which is what a conversation memory needs: a query is scoped to one
// chat or one user's chats, a few thousand turns at most). Sparse search is
// BM25-style: the stored term weights (rag.SparseEncoder) times the query
// weights times an IDF computed over all points in the index, the same as a
// Qdrant sparse vector with the IDF modifier. The two candidate lists are
// fused by reciprocal rank fusion (k = rag.RRFK).
//
// Memory use is about dim*4 bytes per point plus its terms; the whole index
// is loaded at Open. For millions of turns use the Qdrant backend.
package embedded

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/contextd/contextd/rag"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrClosed is returned by calls on a closed index.
var ErrClosed = errors.New("embedded index closed")

// Index is the embedded rag.Index. It is safe for concurrent use.
type Index struct {
	db   *sql.DB
	dim  int
	path string

	wmu sync.Mutex // serialises writers (SQLite write + in-memory update)

	mu      sync.RWMutex // guards everything below
	closed  bool
	tenants map[string]*tenant
	df      map[uint32]int // document frequency of each term over all points
	n       int            // number of points
}

type tenant struct {
	chats map[string]*chat
}

// chat holds one chat's points and its inverted term index, so a query
// scoped to a chat touches only that chat.
type chat struct {
	entries  []*entry
	bySeq    map[int64]int        // seq -> position in entries
	postings map[uint32][]posting // term -> the entries holding it
}

type posting struct {
	e *entry
	w float32 // document weight
}

type entry struct {
	p    rag.Point // payload only: Dense and Sparse left empty
	unit []float32 // L2-normalised dense vector (zero vector stays zero)
	sp   rag.SparseVector
	slot int // position in chat.entries
}

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
	tenant     TEXT    NOT NULL,
	chat_id    TEXT    NOT NULL,
	seq        INTEGER NOT NULL,
	user_id    TEXT    NOT NULL,
	agent      TEXT    NOT NULL,
	role       TEXT    NOT NULL,
	content    TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	dense      BLOB    NOT NULL,
	sparse     BLOB    NOT NULL,
	PRIMARY KEY (tenant, chat_id, seq)
);
CREATE INDEX IF NOT EXISTS points_user ON points (tenant, user_id);
`

// Open opens (creating when needed) the index file at path for vectors of
// size dim and loads it into memory. A file written with another dimension
// is refused with an error wrapping rag.ErrDimensionMismatch.
func Open(ctx context.Context, path string, dim int) (*Index, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("embedded index: dimension must be positive, got %d", dim)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("embedded index: create directory: %w", err)
		}
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("embedded index: open %s: %w", path, err)
	}
	// One connection: writes are serialised anyway and reads are in memory.
	db.SetMaxOpenConns(1)
	ix := &Index{db: db, dim: dim, path: path, tenants: map[string]*tenant{}, df: map[uint32]int{}}
	if err := ix.init(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return ix, nil
}

func (ix *Index) init(ctx context.Context) error {
	if _, err := ix.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("embedded index: create schema in %s: %w", ix.path, err)
	}
	var stored string
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'dim'`).Scan(&stored)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := ix.db.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('dim', ?)`, strconv.Itoa(ix.dim)); err != nil {
			return fmt.Errorf("embedded index: write dimension: %w", err)
		}
	case err != nil:
		return fmt.Errorf("embedded index: read dimension from %s: %w", ix.path, err)
	default:
		sd, err := strconv.Atoi(stored)
		if err != nil {
			return fmt.Errorf("embedded index: bad stored dimension %q in %s", stored, ix.path)
		}
		if sd != ix.dim {
			return fmt.Errorf("%w: the index at %s holds %d-dimensional vectors but the embedder is configured for %d; "+
				"either delete that file and let contextd reindex every turn from storage, "+
				"or set embedder.dimensions back to %d (with the embedder that produced them)",
				rag.ErrDimensionMismatch, ix.path, sd, ix.dim, sd)
		}
	}
	return ix.load(ctx)
}

func (ix *Index) load(ctx context.Context) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT tenant, chat_id, seq, user_id, agent, role, content, created_at, dense, sparse FROM points`)
	if err != nil {
		return fmt.Errorf("embedded index: load: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p rag.Point
		var created int64
		var dense, sp []byte
		if err := rows.Scan(&p.Tenant, &p.ChatID, &p.Seq, &p.UserID, &p.Agent, &p.Role, &p.Content, &created, &dense, &sp); err != nil {
			return fmt.Errorf("embedded index: load: %w", err)
		}
		if created != zeroTime {
			p.CreatedAt = time.Unix(0, created).UTC()
		}
		if p.Dense, err = decodeDense(dense, ix.dim); err != nil {
			return fmt.Errorf("embedded index: point %s/%s/%d: %w", p.Tenant, p.ChatID, p.Seq, err)
		}
		if p.Sparse, err = decodeSparse(sp); err != nil {
			return fmt.Errorf("embedded index: point %s/%s/%d: %w", p.Tenant, p.ChatID, p.Seq, err)
		}
		ix.put(p)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("embedded index: load: %w", err)
	}
	return nil
}

// Dimensions returns the vector size of the index.
func (ix *Index) Dimensions() int { return ix.dim }

func (ix *Index) validate(p rag.Point) error {
	if p.Tenant == "" {
		return fmt.Errorf("embedded index: point %s/%d has no tenant", p.ChatID, p.Seq)
	}
	if p.ChatID == "" {
		return fmt.Errorf("embedded index: point of tenant %s has no chat id", p.Tenant)
	}
	if len(p.Dense) != ix.dim {
		return fmt.Errorf("%w: point %s/%s/%d has %d dimensions, the index %d",
			rag.ErrDimensionMismatch, p.Tenant, p.ChatID, p.Seq, len(p.Dense), ix.dim)
	}
	if len(p.Sparse.Indices) != len(p.Sparse.Values) {
		return fmt.Errorf("embedded index: point %s/%s/%d: sparse vector has %d indices and %d values",
			p.Tenant, p.ChatID, p.Seq, len(p.Sparse.Indices), len(p.Sparse.Values))
	}
	return nil
}

// Upsert stores points, replacing any with the same (Tenant, ChatID, Seq).
// It is durable (committed to the file) when it returns.
func (ix *Index) Upsert(ctx context.Context, points []rag.Point) error {
	if len(points) == 0 {
		return nil
	}
	for _, p := range points {
		if err := ix.validate(p); err != nil {
			return err
		}
	}
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if ix.isClosed() {
		return ErrClosed
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("embedded index: upsert: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO points (tenant, chat_id, seq, user_id, agent, role, content, created_at, dense, sparse)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant, chat_id, seq) DO UPDATE SET user_id = excluded.user_id, agent = excluded.agent,
			role = excluded.role, content = excluded.content, created_at = excluded.created_at,
			dense = excluded.dense, sparse = excluded.sparse`)
	if err != nil {
		return fmt.Errorf("embedded index: upsert: %w", err)
	}
	defer stmt.Close()
	for _, p := range points {
		if _, err := stmt.ExecContext(ctx, p.Tenant, p.ChatID, p.Seq, p.UserID, p.Agent, p.Role, p.Content,
			unixNano(p.CreatedAt), encodeDense(p.Dense), encodeSparse(p.Sparse)); err != nil {
			return fmt.Errorf("embedded index: upsert %s/%s/%d: %w", p.Tenant, p.ChatID, p.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedded index: upsert commit: %w", err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, p := range points {
		if !p.CreatedAt.IsZero() {
			p.CreatedAt = p.CreatedAt.UTC()
		}
		ix.put(p)
	}
	return nil
}

func (ix *Index) isClosed() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.closed
}

// put adds or replaces p in memory. Caller holds mu (or is loading).
func (ix *Index) put(p rag.Point) {
	tn := ix.tenants[p.Tenant]
	if tn == nil {
		tn = &tenant{chats: map[string]*chat{}}
		ix.tenants[p.Tenant] = tn
	}
	c := tn.chats[p.ChatID]
	if c == nil {
		c = &chat{bySeq: map[int64]int{}, postings: map[uint32][]posting{}}
		tn.chats[p.ChatID] = c
	}
	e := &entry{unit: normalise(p.Dense), sp: copySparse(p.Sparse)}
	p.Dense, p.Sparse = nil, rag.SparseVector{}
	e.p = p
	if i, ok := c.bySeq[p.Seq]; ok {
		ix.unpost(c, c.entries[i])
		e.slot = i
		c.entries[i] = e
	} else {
		e.slot = len(c.entries)
		c.bySeq[p.Seq] = e.slot
		c.entries = append(c.entries, e)
		ix.n++
	}
	for k, term := range e.sp.Indices {
		ps := c.postings[term]
		if n := len(ps); n > 0 && ps[n-1].e == e { // repeated index: merge
			ps[n-1].w += e.sp.Values[k]
			continue
		}
		c.postings[term] = append(ps, posting{e, e.sp.Values[k]})
		ix.df[term]++
	}
}

// unpost removes e's terms from c's postings and the document frequencies.
func (ix *Index) unpost(c *chat, e *entry) {
	for _, term := range e.sp.Indices {
		ps := c.postings[term]
		i := slices.IndexFunc(ps, func(p posting) bool { return p.e == e })
		if i < 0 {
			continue // repeated index, already removed
		}
		last := len(ps) - 1
		ps[i] = ps[last]
		ps[last] = posting{}
		if last == 0 {
			delete(c.postings, term)
		} else {
			c.postings[term] = ps[:last]
		}
		if ix.df[term]--; ix.df[term] <= 0 {
			delete(ix.df, term)
		}
	}
}

// remove deletes e (at position i) from c. Caller holds mu.
func (ix *Index) remove(c *chat, i int) {
	e := c.entries[i]
	ix.unpost(c, e)
	last := len(c.entries) - 1
	if i != last {
		c.entries[i] = c.entries[last]
		c.entries[i].slot = i
		c.bySeq[c.entries[i].p.Seq] = i
	}
	c.entries[last] = nil
	c.entries = c.entries[:last]
	delete(c.bySeq, e.p.Seq)
	ix.n--
}

// scope returns the chats a filter can touch. Caller holds mu.
func (ix *Index) scope(f rag.Filter) []*chat {
	tn := ix.tenants[f.Tenant]
	if tn == nil {
		return nil
	}
	if len(f.ChatIDs) > 0 {
		out := make([]*chat, 0, len(f.ChatIDs))
		seen := make(map[string]bool, len(f.ChatIDs))
		for _, id := range f.ChatIDs {
			if c := tn.chats[id]; c != nil && !seen[id] {
				seen[id] = true
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

func matches(f rag.Filter, p *rag.Point) bool {
	return (f.UserID == "" || p.UserID == f.UserID) && (f.Agent == "" || p.Agent == f.Agent)
}

type scored struct {
	e     *entry
	score float32
}

// less orders candidates by score, then by (chat, seq) so ties are stable.
func cmpScored(a, b scored) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.e.p.ChatID, b.e.p.ChatID); c != 0 {
		return c
	}
	return int(a.e.p.Seq - b.e.p.Seq)
}

// Query answers a hybrid query: dense candidates (exact cosine, those below
// ScoreThreshold dropped when it is > 0, top Prefetch) and sparse candidates
// (points sharing a query term, BM25 weight × IDF, top Prefetch), fused by
// RRF with 1-based ranks.
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
	qv := normalise(q.Dense)

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	chats := ix.scope(q.Filter)

	var dense []scored
	if len(qv) > 0 {
		top := newTopK(prefetch)
		for _, c := range chats {
			for _, e := range c.entries {
				if !matches(q.Filter, &e.p) {
					continue
				}
				s := dot(qv, e.unit)
				if q.ScoreThreshold > 0 && s < q.ScoreThreshold {
					continue
				}
				top.push(scored{e, s})
			}
		}
		dense = top.sorted()
	}

	var sparse []scored
	if len(q.Sparse.Indices) > 0 {
		top := newTopK(prefetch)
		idf := make([]float32, len(q.Sparse.Indices))
		for k, term := range q.Sparse.Indices {
			idf[k] = q.Sparse.Values[k] * ix.idf(term)
		}
		var acc []float32
		var seen []bool
		var touched []*entry
		for _, c := range chats {
			// Accumulate per chat in slot-indexed buffers: no map per query.
			n := len(c.entries)
			acc = slices.Grow(acc[:0], n)[:n]
			seen = slices.Grow(seen[:0], n)[:n]
			clear(acc)
			clear(seen)
			touched = touched[:0]
			for k, term := range q.Sparse.Indices {
				for _, p := range c.postings[term] {
					if !matches(q.Filter, &p.e.p) {
						continue
					}
					if !seen[p.e.slot] {
						seen[p.e.slot] = true
						touched = append(touched, p.e)
					}
					acc[p.e.slot] += idf[k] * p.w
				}
			}
			for _, e := range touched {
				top.push(scored{e, acc[e.slot]})
			}
		}
		sparse = top.sorted()
	}

	return fuse(dense, sparse, q.Limit), nil
}

// idf is Qdrant's IDF modifier: ln(1 + (N - n + 0.5)/(n + 0.5)).
func (ix *Index) idf(term uint32) float32 {
	n := float64(ix.df[term])
	return float32(math.Log(1 + (float64(ix.n)-n+0.5)/(n+0.5)))
}

func topK(s []scored, k int) []scored {
	t := newTopK(k)
	for _, x := range s {
		t.push(x)
	}
	return t.sorted()
}

// topK keeps the k best candidates in a heap whose root is the worst kept.
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

// fuse merges the two ranked lists by reciprocal rank fusion.
func fuse(dense, sparse []scored, limit int) []rag.Hit {
	type acc struct {
		rrf, cos float32
	}
	m := make(map[*entry]*acc, len(dense)+len(sparse))
	for r, s := range dense {
		m[s.e] = &acc{rrf: 1 / float32(rag.RRFK+r+1), cos: s.score}
	}
	for r, s := range sparse {
		a := m[s.e]
		if a == nil {
			a = &acc{}
			m[s.e] = a
		}
		a.rrf += 1 / float32(rag.RRFK+r+1)
	}
	fused := make([]scored, 0, len(m))
	for e, a := range m {
		fused = append(fused, scored{e, a.rrf})
	}
	fused = topK(fused, limit)
	hits := make([]rag.Hit, len(fused))
	for i, s := range fused {
		hits[i] = rag.Hit{Point: s.e.p, Score: s.score, DenseScore: m[s.e].cos}
	}
	return hits
}

// Delete removes every point matching f, from the file and from memory.
func (ix *Index) Delete(ctx context.Context, f rag.Filter) error {
	if f.Tenant == "" {
		return errors.New("embedded index: delete without tenant")
	}
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if ix.isClosed() {
		return ErrClosed
	}
	where, args := whereClause(f)
	if _, err := ix.db.ExecContext(ctx, `DELETE FROM points WHERE `+where, args...); err != nil {
		return fmt.Errorf("embedded index: delete: %w", err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	tn := ix.tenants[f.Tenant]
	if tn == nil {
		return nil
	}
	for id, c := range tn.chats {
		if len(f.ChatIDs) > 0 && !slices.Contains(f.ChatIDs, id) {
			continue
		}
		for i := len(c.entries) - 1; i >= 0; i-- {
			if matches(f, &c.entries[i].p) {
				ix.remove(c, i)
			}
		}
		if len(c.entries) == 0 {
			delete(tn.chats, id)
		}
	}
	if len(tn.chats) == 0 {
		delete(ix.tenants, f.Tenant)
	}
	return nil
}

func whereClause(f rag.Filter) (string, []any) {
	conds := []string{"tenant = ?"}
	args := []any{f.Tenant}
	if f.UserID != "" {
		conds = append(conds, "user_id = ?")
		args = append(args, f.UserID)
	}
	if f.Agent != "" {
		conds = append(conds, "agent = ?")
		args = append(args, f.Agent)
	}
	if len(f.ChatIDs) > 0 {
		conds = append(conds, "chat_id IN (?"+strings.Repeat(", ?", len(f.ChatIDs)-1)+")")
		for _, id := range f.ChatIDs {
			args = append(args, id)
		}
	}
	return strings.Join(conds, " AND "), args
}

// Count returns how many points match f.
func (ix *Index) Count(ctx context.Context, f rag.Filter) (int, error) {
	if f.Tenant == "" {
		return 0, errors.New("embedded index: count without tenant")
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return 0, ErrClosed
	}
	n := 0
	for _, c := range ix.scope(f) {
		if f.UserID == "" && f.Agent == "" {
			n += len(c.entries)
			continue
		}
		for _, e := range c.entries {
			if matches(f, &e.p) {
				n++
			}
		}
	}
	return n, nil
}

// Ping checks the file is still usable.
func (ix *Index) Ping(ctx context.Context) error {
	if ix.isClosed() {
		return ErrClosed
	}
	if err := ix.db.PingContext(ctx); err != nil {
		return fmt.Errorf("embedded index: %w", err)
	}
	return nil
}

// Close releases the file. Later calls fail with ErrClosed.
func (ix *Index) Close() error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return nil
	}
	ix.closed = true
	ix.tenants, ix.df = nil, nil
	ix.mu.Unlock()
	return ix.db.Close()
}

// zeroTime stores the zero time.Time, which UnixNano cannot represent.
const zeroTime = math.MinInt64

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return zeroTime
	}
	return t.UnixNano()
}

func normalise(v []float32) []float32 {
	if len(v) == 0 {
		return nil
	}
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(s))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

func copySparse(s rag.SparseVector) rag.SparseVector {
	return rag.SparseVector{Indices: slices.Clone(s.Indices), Values: slices.Clone(s.Values)}
}

func encodeDense(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeDense(b []byte, dim int) ([]float32, error) {
	if len(b) != 4*dim {
		return nil, fmt.Errorf("%w: stored vector has %d bytes, want %d", rag.ErrDimensionMismatch, len(b), 4*dim)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func encodeSparse(s rag.SparseVector) []byte {
	b := make([]byte, 8*len(s.Indices))
	for i, idx := range s.Indices {
		binary.LittleEndian.PutUint32(b[8*i:], idx)
		binary.LittleEndian.PutUint32(b[8*i+4:], math.Float32bits(s.Values[i]))
	}
	return b
}

func decodeSparse(b []byte) (rag.SparseVector, error) {
	if len(b)%8 != 0 {
		return rag.SparseVector{}, fmt.Errorf("corrupt sparse vector (%d bytes)", len(b))
	}
	n := len(b) / 8
	s := rag.SparseVector{Indices: make([]uint32, n), Values: make([]float32, n)}
	for i := 0; i < n; i++ {
		s.Indices[i] = binary.LittleEndian.Uint32(b[8*i:])
		s.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8*i+4:]))
	}
	return s, nil
}
