// Package embedded is contextd's default vector index: no server, one SQLite
// file (modernc.org/sqlite, pure Go) for durability and a compact in-memory
// copy of what search needs.
//
// Dense search is exact brute force over the chats in scope (a conversation
// memory queries one chat or one user's chats, a few thousand turns at
// most), on int8 vectors: each vector is L2-normalised and quantised with
// its own scale (symmetric, largest component = ±127), and the score is the
// int8 dot product (int32 accumulation) times both scales — the cosine
// similarity to within a few thousandths (measured: at most 0.006, and 97-99%
// of the exact top 20 kept, see quant_test.go). Sparse search is
// BM25-style: the stored term weights (rag.SparseEncoder) times the query
// weights times an IDF computed over all points in the index, the same as a
// Qdrant sparse vector with the IDF modifier. The two candidate lists are
// fused by reciprocal rank fusion (k = rag.RRFK).
//
// Memory: about dim + 40 bytes per point plus 8 bytes per sparse term (700
// bytes for a 384-dimensional turn of 35 words, against 3.4 KB with float32
// vectors and the content in memory). Role, content and created_at stay in
// the file: a query reads them, by primary key, for the hits it returns
// only (about 2 µs a hit). The file stores the int8 vectors and their
// scales; files from earlier versions, with float32 vectors, open as they
// are (their vectors are quantised when loaded).
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
	db  *sql.DB // writes (one connection)
	rdb *sql.DB // reads of hit payloads: WAL readers, so queries never wait for a write
	// readRange and readSeek prepared on rdb.
	readRange, readSeek *sql.Stmt
	dim                 int
	path                string

	wmu sync.Mutex // serialises writers (SQLite write + in-memory update)

	mu      sync.RWMutex // guards everything below
	closed  bool
	tenants map[string]*tenant
	labels  *labels          // interned user and agent ids
	df      map[uint32]int32 // document frequency of each term over all points
	n       int              // number of points
}

type tenant struct {
	chats map[string]*chat
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
CREATE INDEX IF NOT EXISTS points_payload ON points (tenant, chat_id, seq, created_at, role, content);
`

// readConns bounds the connections reading hit payloads concurrently.
const readConns = 4

// Open opens (creating when needed) the index file at path for vectors of
// size dim and loads it into memory. A file written with another dimension
// is refused with an error wrapping rag.ErrDimensionMismatch.
func Open(ctx context.Context, path string, dim int) (*Index, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("embedded index: dimension must be positive, got %d", dim)
	}
	memory := path == ":memory:" || strings.HasPrefix(path, "file::memory:")
	if dir := filepath.Dir(path); dir != "" && !memory {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("embedded index: create directory: %w", err)
		}
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("embedded index: open %s: %w", path, err)
	}
	// One writer connection: writes are serialised anyway.
	db.SetMaxOpenConns(1)
	ix := &Index{db: db, rdb: db, dim: dim, path: path, tenants: map[string]*tenant{},
		labels: newLabels(), df: map[uint32]int32{}}
	if err := ix.init(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if !memory { // an in-memory database exists on its one connection only
		rdb, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
		if err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("embedded index: open %s for reading: %w", path, err)
		}
		rdb.SetMaxOpenConns(readConns)
		rdb.SetMaxIdleConns(readConns)
		ix.rdb = rdb
	}
	if ix.readRange, err = ix.rdb.PrepareContext(ctx, readRange); err == nil {
		ix.readSeek, err = ix.rdb.PrepareContext(ctx, readSeek)
	}
	if err != nil {
		_ = ix.close()
		return nil, fmt.Errorf("embedded index: prepare reads of %s: %w", path, err)
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

// load builds the in-memory index from the file: filter fields and vectors
// only, never the content.
func (ix *Index) load(ctx context.Context) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT tenant, chat_id, seq, user_id, agent, dense, sparse FROM points`)
	if err != nil {
		return fmt.Errorf("embedded index: load: %w", err)
	}
	defer rows.Close()
	var (
		tenantID, chatID, user, agent, dense, sp sql.RawBytes
		seq                                      int64
		v                                        = make([]float32, ix.dim)
		q                                        = make([]int8, ix.dim)
		sv                                       rag.SparseVector
	)
	for rows.Next() {
		if err := rows.Scan(&tenantID, &chatID, &seq, &user, &agent, &dense, &sp); err != nil {
			return fmt.Errorf("embedded index: load: %w", err)
		}
		scale, err := decodeDense(dense, v, q)
		if err != nil {
			return fmt.Errorf("embedded index: point %s/%s/%d: %w", tenantID, chatID, seq, err)
		}
		if sv, err = decodeSparse(sp, sv); err != nil {
			return fmt.Errorf("embedded index: point %s/%s/%d: %w", tenantID, chatID, seq, err)
		}
		ix.put(string(tenantID), string(chatID), seq, string(user), string(agent), q, scale, canonSparse(sv))
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
	// Quantise outside the locks.
	qs := make([]int8, len(points)*ix.dim)
	scales := make([]float32, len(points))
	sps := make([]rag.SparseVector, len(points))
	for i, p := range points {
		scales[i] = quantise(p.Dense, qs[i*ix.dim:(i+1)*ix.dim])
		sps[i] = canonSparse(p.Sparse)
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
	for i, p := range points {
		if _, err := stmt.ExecContext(ctx, p.Tenant, p.ChatID, p.Seq, p.UserID, p.Agent, p.Role, p.Content,
			unixNano(p.CreatedAt), encodeDense(qs[i*ix.dim:(i+1)*ix.dim], scales[i]), encodeSparse(p.Sparse)); err != nil {
			return fmt.Errorf("embedded index: upsert %s/%s/%d: %w", p.Tenant, p.ChatID, p.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedded index: upsert commit: %w", err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for i, p := range points {
		ix.put(p.Tenant, p.ChatID, p.Seq, p.UserID, p.Agent, qs[i*ix.dim:(i+1)*ix.dim], scales[i], sps[i])
	}
	return nil
}

func (ix *Index) isClosed() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.closed
}

// put adds or replaces a point in memory, copying q and sp. sp is
// canonical (canonSparse). Caller holds mu (or is loading).
func (ix *Index) put(tenantID, chatID string, seq int64, user, agent string, q []int8, scale float32, sp rag.SparseVector) {
	tn := ix.tenants[tenantID]
	if tn == nil {
		tn = &tenant{chats: map[string]*chat{}}
		ix.tenants[strings.Clone(tenantID)] = tn
	}
	c := tn.chats[chatID]
	if c == nil {
		c = &chat{id: strings.Clone(chatID)}
		tn.chats[c.id] = c
	}
	u, a := ix.labels.acquire(user), ix.labels.acquire(agent)
	if slot, found := slices.BinarySearch(c.seqs, seq); found {
		ix.labels.release(c.users[slot])
		ix.labels.release(c.agents[slot])
		c.users[slot], c.agents[slot], c.scales[slot] = u, a, scale
		copy(c.vec(slot, ix.dim), q)
		old, _ := c.terms(slot)
		ix.undf(old)
		c.setTerms(slot, sp.Indices, sp.Values)
	} else {
		c.insert(slot, ix.dim, seq, u, a, q, scale, sp.Indices, sp.Values)
		ix.n++
	}
	for _, t := range sp.Indices {
		ix.df[t]++
	}
}

func (ix *Index) undf(terms []uint32) {
	for _, t := range terms {
		if ix.df[t]--; ix.df[t] <= 0 {
			delete(ix.df, t)
		}
	}
}

// forget releases what point slot of c holds outside c (labels, document
// frequencies, the count) before c drops it. Caller holds mu.
func (ix *Index) forget(c *chat, slot int) {
	ix.labels.release(c.users[slot])
	ix.labels.release(c.agents[slot])
	terms, _ := c.terms(slot)
	ix.undf(terms)
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

// matcher applies a filter's user and agent to points by label id.
type matcher struct {
	user, agent       uint32
	anyUser, anyAgent bool
	none              bool // a label no point has: nothing matches
}

// matcher resolves f's labels. Caller holds mu.
func (ix *Index) matcher(f rag.Filter) matcher {
	m := matcher{anyUser: f.UserID == "", anyAgent: f.Agent == ""}
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

func (m matcher) all() bool { return m.anyUser && m.anyAgent }

func (m matcher) ok(c *chat, slot int) bool {
	return (m.anyUser || c.users[slot] == m.user) && (m.anyAgent || c.agents[slot] == m.agent)
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
	type payload struct {
		role, content string
		created       int64
		ok            bool
	}
	got := make([]payload, len(hits))
	done := make([]bool, len(hits))
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
		out = append(out, h)
	}
	return out, nil
}

// readRange and readSeek read the payload of a chat's hits from
// points_payload, which holds the payload columns in (tenant, chat, seq)
// order, so a chat's rows sit together in few pages. The seqs wanted are a
// JSON array, so the statement text is fixed and prepared once. readRange
// walks the index from the lowest to the highest seq wanted, one seek in
// all ("+seq" keeps SQLite from seeking each); readSeek seeks each seq.
const (
	readRange = `SELECT seq, role, content, created_at FROM points INDEXED BY points_payload
	WHERE tenant = ?1 AND chat_id = ?2 AND seq BETWEEN ?3 AND ?4 AND substr(?5, seq - ?3 + 1, 1) = x'01'`
	readSeek = `SELECT seq, role, content, created_at FROM points INDEXED BY points_payload
	WHERE tenant = ? AND chat_id = ? AND seq IN (SELECT value FROM json_each(?))`
)

func (ix *Index) readErr(err error) error {
	if ix.isClosed() {
		return ErrClosed
	}
	return fmt.Errorf("embedded index: read hits: %w", err)
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
	m := ix.matcher(f)
	if m.none {
		return nil
	}
	for _, c := range ix.scope(f) {
		if m.all() {
			for i := range c.seqs {
				ix.forget(c, i)
			}
			delete(tn.chats, c.id)
			continue
		}
		c.keep(ix.dim, func(i int) bool { return !m.ok(c, i) }, func(i int) { ix.forget(c, i) })
		if c.len() == 0 {
			delete(tn.chats, c.id)
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
	m := ix.matcher(f)
	if m.none {
		return 0, nil
	}
	n := 0
	for _, c := range ix.scope(f) {
		if m.all() {
			n += c.len()
			continue
		}
		for i := range c.seqs {
			if m.ok(c, i) {
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
	ix.tenants, ix.df, ix.labels = nil, nil, nil
	ix.mu.Unlock()
	return ix.close()
}

func (ix *Index) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{ix.readRange, ix.readSeek} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if ix.rdb != ix.db {
		errs = append(errs, ix.rdb.Close())
	}
	return errors.Join(append(errs, ix.db.Close())...)
}

// zeroTime stores the zero time.Time, which UnixNano cannot represent.
const zeroTime = math.MinInt64

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return zeroTime
	}
	return t.UnixNano()
}

// encodeDense stores a quantised vector as its float32 scale (little
// endian) followed by the int8 components: dim+4 bytes, a quarter of the
// float32 vector, so rows (and the file, and the pages read at start-up)
// are about 3× smaller.
func encodeDense(q []int8, scale float32) []byte {
	b := make([]byte, 4+len(q))
	binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
	for i, x := range q {
		b[4+i] = byte(x)
	}
	return b
}

// decodeDense decodes a stored vector into q and returns its scale. Files
// written before quantisation hold float32 vectors (4*dim bytes): those are
// decoded into v and quantised. The two sizes never coincide (dim+4 =
// 4*dim has no integer solution).
func decodeDense(b []byte, v []float32, q []int8) (float32, error) {
	switch len(b) {
	case 4 + len(q):
		for i := range q {
			q[i] = int8(b[4+i])
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case 4 * len(v):
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return quantise(v, q), nil
	}
	return 0, fmt.Errorf("%w: stored vector has %d bytes, want %d (int8) or %d (float32)",
		rag.ErrDimensionMismatch, len(b), 4+len(q), 4*len(v))
}

func encodeSparse(s rag.SparseVector) []byte {
	b := make([]byte, 8*len(s.Indices))
	for i, idx := range s.Indices {
		binary.LittleEndian.PutUint32(b[8*i:], idx)
		binary.LittleEndian.PutUint32(b[8*i+4:], math.Float32bits(s.Values[i]))
	}
	return b
}

// decodeSparse decodes a stored sparse vector, reusing buf's slices.
func decodeSparse(b []byte, buf rag.SparseVector) (rag.SparseVector, error) {
	if len(b)%8 != 0 {
		return rag.SparseVector{}, fmt.Errorf("corrupt sparse vector (%d bytes)", len(b))
	}
	n := len(b) / 8
	s := rag.SparseVector{Indices: slices.Grow(buf.Indices[:0], n)[:n], Values: slices.Grow(buf.Values[:0], n)[:n]}
	for i := 0; i < n; i++ {
		s.Indices[i] = binary.LittleEndian.Uint32(b[8*i:])
		s.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8*i+4:]))
	}
	return s, nil
}
