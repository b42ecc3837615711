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
// Memory: about 32 bytes per point in Go's heap (38 bytes for a turn of
// 35 words, against 3.4 KB with float32 vectors and the content in
// memory); the int8 vectors (dim bytes a point) and the sparse terms (6
// bytes a term) sit in scratch files beside the index file, one region per
// chat each, which a query reads with one pread per chat in scope
// (vecfile.go) and two for its terms (termfile.go): the kernel's page
// cache keeps them, not the process. Role, content and
// created_at stay in the index file: a query reads them, by primary key,
// for the hits it returns only (about 2 µs a hit). The file stores the
// int8 vectors and their scales; files from earlier versions, with float32
// vectors, open as they are (their vectors are quantised when loaded).
package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/contextd/contextd/internal/sqlitefull"
	"github.com/contextd/contextd/internal/walscrub"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrClosed is returned by calls on a closed index.
var ErrClosed = errors.New("embedded index closed")

// Index is the embedded rag.Index. It is safe for concurrent use.
type Index struct {
	file // the SQLite file: connections, prepared statements, WAL scrub
	dim  int

	wmu sync.Mutex // serialises writers (SQLite write + in-memory update)

	payloads *payloadCache // recently returned hits' payloads

	mu      sync.RWMutex // guards everything below
	closed  bool
	tenants map[string]*tenant
	labels  *labels          // interned user and agent ids
	df      map[uint32]int32 // document frequency of each term over all points
	n       int              // number of points
	vf      *vecFile         // the vectors (chat.vecs regions)
	tf      *termFile        // the sparse arenas (chat.sp regions)
	res     *resident        // the chats whose rows are in RAM (resident.go)
	// sketchFrom: chats of fewer points are always searched exactly; a
	// larger one's rows (sketch.go) are built by the first query that uses
	// them (0: every search exact). postingsFrom: the same for the sparse
	// side's postings (postings.go).
	sketchFrom, postingsFrom int
}

// file is the index file as SQLite serves it: what Open opens and close
// closes.
type file struct {
	path string
	db   *sql.DB // writes (one connection)
	rdb  *sql.DB // reads of hit payloads: WAL readers, so queries never wait for a write
	// readRange, readSeek and readExtra prepared on rdb; upsert on db
	// (each write transaction uses it rather than preparing it again).
	readRange, readSeek, readExtraStmt, readExtraSeek, upsert *sql.Stmt

	// scrub truncates the WAL after a Delete (nil in memory); cpdb is its
	// connection.
	scrub *walscrub.Scrubber
	cpdb  *sql.DB
}

// Option tunes Open.
type Option func(*options)

type options struct {
	scrubDelay time.Duration
	sketchFrom int
}

// SketchFrom sets how many points a chat has before a query may search it
// by the sketch (sketch.go), rescoring a bounded candidate set instead of
// every point, and by its postings (postings.go): 0 is the defaults
// (defaultSketchFrom, defaultPostingsFrom), < 0 never (every search a
// scan). Tests use small values to run the bookkeeping on small chats.
func SketchFrom(n int) Option {
	return func(o *options) { o.sketchFrom = n }
}

// ScrubDelay is how long after a Delete the file's WAL is truncated, so
// that the deleted points' text leaves the log too; ≤ 0 is
// walscrub.DefaultDelay.
func ScrubDelay(d time.Duration) Option {
	return func(o *options) { o.scrubDelay = d }
}

type tenant struct {
	chats map[string]*chat
}

// readConns bounds the connections reading hit payloads concurrently.
const readConns = 4

// Open opens (creating when needed) the index file at path for vectors of
// size dim and loads it into memory. A file written with another dimension
// is refused with an error wrapping rag.ErrDimensionMismatch.
func Open(ctx context.Context, path string, dim int, opts ...Option) (*Index, error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if dim <= 0 {
		return nil, fmt.Errorf("embedded index: dimension must be positive, got %d", dim)
	}
	memory := path == ":memory:" || strings.HasPrefix(path, "file::memory:")
	if dir := filepath.Dir(path); dir != "" && !memory {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("embedded index: create directory: %w", err)
		}
	}
	// secure_delete: an erased chat's points are overwritten, not left in
	// free pages.
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=secure_delete(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("embedded index: open %s: %w", path, err)
	}
	// One writer connection: writes are serialised anyway.
	db.SetMaxOpenConns(1)
	ix := newIndex(db, path, dim, o.sketchFrom)
	vdir := filepath.Dir(path)
	if memory {
		vdir = ""
	}
	if ix.vf, err = openVecFile(vdir, filepath.Base(path), dim); err != nil {
		_ = db.Close()
		return nil, err
	}
	if ix.tf, err = openTermFile(vdir, filepath.Base(path)); err != nil {
		_ = ix.vf.close()
		_ = db.Close()
		return nil, err
	}
	if err := ix.init(ctx); err != nil {
		_ = ix.vf.close()
		_ = ix.tf.close()
		_ = db.Close()
		return nil, err
	}
	if !memory { // an in-memory database exists on its one connection only
		if err := ix.openReaders(); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	if err := ix.prepare(ctx); err != nil {
		_ = ix.close()
		return nil, fmt.Errorf("embedded index: prepare statements of %s: %w", path, err)
	}
	if !memory {
		if err := ix.startScrub(ctx, o.scrubDelay); err != nil {
			_ = ix.close()
			return nil, err
		}
	}
	return ix, nil
}

// newIndex is an empty index on db; sketchFrom is Open's option.
func newIndex(db *sql.DB, path string, dim, sketchFrom int) *Index {
	ix := &Index{file: file{db: db, rdb: db, path: path}, dim: dim, tenants: map[string]*tenant{},
		payloads: newPayloadCache(defaultPayloadCacheBytes), labels: newLabels(), df: map[uint32]int32{},
		sketchFrom: sketchFrom, res: &resident{budget: defaultResidentBytes}}
	switch {
	case sketchFrom == 0:
		ix.sketchFrom, ix.postingsFrom = defaultSketchFrom, defaultPostingsFrom
		ix.res.warmFrom = defaultWarmFrom
	case sketchFrom < 0:
		ix.sketchFrom, ix.postingsFrom = 0, 0
	default:
		ix.postingsFrom = sketchFrom
	}
	return ix
}

// openReaders opens the pool that reads hit payloads. A reader's page
// cache is 512 KiB, not SQLite's 2 MB: its reads are point lookups the OS
// page cache serves as well, and each connection's cache is memory
// outside Go's heap and its limit.
func (ix *Index) openReaders() error {
	rdb, err := sql.Open("sqlite", "file:"+ix.path+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)&_pragma=cache_size(-512)")
	if err != nil {
		return fmt.Errorf("embedded index: open %s for reading: %w", ix.path, err)
	}
	rdb.SetMaxOpenConns(readConns)
	rdb.SetMaxIdleConns(readConns)
	ix.rdb = rdb
	return nil
}

// prepare prepares the reads on rdb and the upsert on db.
func (ix *Index) prepare(ctx context.Context) error {
	var err error
	if ix.readRange, err = ix.rdb.PrepareContext(ctx, readRange); err == nil {
		ix.readSeek, err = ix.rdb.PrepareContext(ctx, readSeek)
	}
	if err == nil {
		ix.readExtraStmt, err = ix.rdb.PrepareContext(ctx, readExtra)
	}
	if err == nil {
		ix.readExtraSeek, err = ix.rdb.PrepareContext(ctx, readExtraSeek)
	}
	if err == nil {
		ix.upsert, err = ix.db.PrepareContext(ctx, upsertPoint)
	}
	return err
}

// startScrub starts the WAL's truncation after deletes, on a connection of
// its own (it waits for readers), and truncates the WAL a crash left now:
// it may hold points deleted before the crash.
func (ix *Index) startScrub(ctx context.Context, delay time.Duration) error {
	db, err := sql.Open("sqlite", "file:"+ix.path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return fmt.Errorf("embedded index: open %s for checkpoints: %w", ix.path, err)
	}
	db.SetMaxOpenConns(1)
	ix.cpdb, ix.scrub = db, walscrub.Start(db, delay, nil)
	if err := walscrub.Truncate(ctx, db); err != nil {
		ix.scrub.Soon()
	}
	return nil
}

func (ix *Index) init(ctx context.Context) error {
	if _, err := ix.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("embedded index: create schema in %s: %w", ix.path, err)
	}
	if err := ix.addColumns(ctx); err != nil {
		return err
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

// addColumns upgrades a file written before episodes, facts or passages
// were indexed.
func (ix *Index) addColumns(ctx context.Context) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT name FROM pragma_table_info('points')`)
	if err != nil {
		return fmt.Errorf("embedded index: read schema: %w", err)
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("embedded index: read schema: %w", err)
		}
		have[name] = true
	}
	rows.Close()
	for _, col := range addedColumns {
		if name, _, _ := strings.Cut(col, " "); !have[name] {
			if _, err := ix.db.ExecContext(ctx, `ALTER TABLE points ADD COLUMN `+col); err != nil {
				return fmt.Errorf("embedded index: add column %s: %w", name, err)
			}
		}
	}
	return nil
}

// load builds the in-memory index from the file: filter fields and vectors
// only, never the content.
func (ix *Index) load(ctx context.Context) error {
	ix.tf.loading = &termLoad{wait: map[*chat]*termBuf{}}
	defer func() { ix.tf.loading = nil }()
	rows, err := ix.db.QueryContext(ctx, `SELECT tenant, chat_id, seq, user_id, agent, dense, sparse, created_at, started_at,
		episode_id, fact_id, seqs, superseded FROM points`)
	if err != nil {
		return fmt.Errorf("embedded index: load: %w", err)
	}
	defer rows.Close()
	var (
		tenantID, chatID, user, agent, dense, sp, episodeID, factID, seqs sql.RawBytes
		key, created, started                                             int64
		superseded                                                        bool
		v                                                                 = make([]float32, ix.dim)
		q                                                                 = make([]int8, ix.dim)
		sv                                                                rag.SparseVector
	)
	for rows.Next() {
		if err := rows.Scan(&tenantID, &chatID, &key, &user, &agent, &dense, &sp, &created, &started,
			&episodeID, &factID, &seqs, &superseded); err != nil {
			return fmt.Errorf("embedded index: load: %w", err)
		}
		scale, err := decodeDense(dense, v, q)
		if err != nil {
			return fmt.Errorf("embedded index: point %s/%s/%d: %w", tenantID, chatID, key, err)
		}
		if sv, err = decodeSparse(sp, sv); err != nil {
			return fmt.Errorf("embedded index: point %s/%s/%d: %w", tenantID, chatID, key, err)
		}
		t := nanoToSec(created)
		var it *item
		switch keyKind(key) {
		case kindEpisode:
			it = &item{id: string(episodeID), end: t}
			t = nanoToSec(started)
		case kindFact:
			it = &item{id: string(factID), superseded: superseded}
			if it.seqs, err = decodeSeqs(seqs); err != nil || len(it.seqs) == 0 {
				return fmt.Errorf("embedded index: fact %s/%s/%s: no source seqs: %v", tenantID, chatID, factID, err)
			}
		}
		if err := ix.put(string(tenantID), string(chatID), key, t, it, string(user), string(agent), q, scale, canonSparse(sv)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("embedded index: load: %w", err)
	}
	return ix.tf.loading.flush(ix)
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
	if err := validateKind(p); err != nil {
		return fmt.Errorf("embedded index: point %s/%s/%d: %w", p.Tenant, p.ChatID, p.Seq, err)
	}
	if p.Seq <= 0 {
		return fmt.Errorf("embedded index: point %s/%s: seq %d must be positive", p.Tenant, p.ChatID, p.Seq)
	}
	return nil
}

// pointTime is a point's time in RAM (unix seconds): a turn's time, a
// fact's valid_at, an episode's start.
func pointTime(p rag.Point) int64 {
	switch p.Kind {
	case memory.KindEpisode:
		return unixSec(p.StartedAt)
	case memory.KindFact:
		return unixSec(factTime(p))
	}
	return unixSec(p.CreatedAt)
}

// factTime is a fact's time: ValidAt, else CreatedAt.
func factTime(p rag.Point) time.Time {
	if p.ValidAt.IsZero() {
		return p.CreatedAt
	}
	return p.ValidAt
}

// pointItem is what RAM keeps of an episode or a fact (nil for a turn).
func pointItem(p rag.Point) *item {
	switch p.Kind {
	case memory.KindEpisode:
		return &item{id: p.EpisodeID, end: unixSec(p.EndedAt)}
	case memory.KindFact:
		return &item{id: p.FactID, seqs: slices.Clone(p.Seqs), superseded: p.Superseded}
	}
	return nil
}

// Upsert stores points, replacing any with the same identity (see rag.Index).
// It is durable (committed to the file) when it returns.
func (ix *Index) Upsert(ctx context.Context, points []rag.Point) error {
	return sqlitefull.Mark("embedded index", ix.upsertPoints(ctx, points))
}

func (ix *Index) upsertPoints(ctx context.Context, points []rag.Point) error {
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
	keys := make([]payloadKey, len(points))
	for i, p := range points {
		keys[i] = payloadKey{p.Tenant, p.ChatID, pointKey(p)}
	}
	ix.payloads.forget(keys)
	stmt := tx.StmtContext(ctx, ix.upsert) // prepared once, on the one connection
	defer stmt.Close()
	for i, p := range points {
		created, started := p.CreatedAt, time.Time{}
		switch p.Kind {
		case memory.KindEpisode:
			created, started = p.EndedAt, p.StartedAt
		case memory.KindFact:
			created = factTime(p)
		}
		if _, err := stmt.ExecContext(ctx, p.Tenant, p.ChatID, pointKey(p), p.UserID, p.Agent, p.Role, p.Content,
			unixNano(created), encodeDense(qs[i*ix.dim:(i+1)*ix.dim], scales[i]), encodeSparse(p.Sparse),
			p.ToSeq, unixNano(started), p.EpisodeID, p.FactID, encodeSeqs(p.Seqs), p.Superseded,
			p.PassageFrom, p.TurnBytes); err != nil {
			return fmt.Errorf("embedded index: upsert %s/%s/%d: %w", p.Tenant, p.ChatID, p.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedded index: upsert commit: %w", err)
	}
	for i, p := range points {
		// The file has them all; memory has those before a failure, and
		// the caller retries the batch (an upsert of a point is idempotent).
		// The lock is taken per point: a batch spans many chats, and
		// queries (which hold the read lock) should not wait for all of it.
		ix.mu.Lock()
		err := ix.put(p.Tenant, p.ChatID, pointKey(p), pointTime(p), pointItem(p), p.UserID, p.Agent, qs[i*ix.dim:(i+1)*ix.dim], scales[i], sps[i])
		ix.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

func (ix *Index) isClosed() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.closed
}

// put adds or replaces the point with this key in memory, copying q and
// sp; it is an episode's or a fact's item (nil for a turn). sp is
// canonical (canonSparse). Caller holds mu (or is loading).
func (ix *Index) put(tenantID, chatID string, seq, t int64, it *item, user, agent string, q []int8, scale float32, sp rag.SparseVector) error {
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
	slot, found := slices.BinarySearch(c.seqs, seq)
	ws := appendBF16(make([]uint16, 0, len(sp.Values)), sp.Values)
	off, pos, old, err := ix.putFiles(c, slot, found, q, sp.Indices, ws)
	defer ix.tf.put(old)
	if err != nil {
		if c.len() == 0 {
			ix.vf.release(c.vecs)
			ix.tf.release(c.sp)
			delete(tn.chats, c.id)
		}
		return err
	}
	u, a := ix.labels.acquire(user), ix.labels.acquire(agent)
	c.label(c.len(), u, a)
	if found {
		ix.labels.release(c.userOf(slot))
		ix.labels.release(c.agentOf(slot))
		c.setLabels(slot, u, a)
		c.scales[slot] = scale
		c.times.set(slot, t)
		ix.undf(old.ids)
		c.setTerms(slot, off, uint32(len(sp.Indices)))
	} else {
		c.insert(slot, pos, off, uint32(len(sp.Indices)), seq, t, u, a, scale)
		ix.n++
	}
	ix.putSketch(c, slot, found, q)
	ix.putPostings(c, slot, found, sp.Indices, ws)
	ix.maybeCompact(c)
	if it != nil {
		if c.items == nil {
			c.items = map[int64]*item{}
		}
		c.items[seq] = it
	}
	for _, t := range sp.Indices {
		ix.df[t]++
	}
	return nil
}

// putFiles writes a point's terms (idx, ws) and vector (q) to the scratch
// files, at the end of c's arena and, for a new point (not found), at the
// end of c's vector region: the offset of its terms, its vector's
// position, and (found) the old terms of slot. When it fails nothing the
// point's slot refers to has changed, so the caller's retry puts it whole.
// Caller holds mu.
func (ix *Index) putFiles(c *chat, slot int, found bool, q []int8, idx []uint32, ws []uint16) (off, pos uint32, old *termBuf, err error) {
	if found {
		if ix.tf.loading != nil { // a key loaded twice: its first terms must be in the file
			if err := ix.tf.loading.flush(ix); err != nil {
				return 0, 0, nil, err
			}
		}
		if old, err = ix.termsOf(c, slot); err != nil {
			return 0, 0, nil, err
		}
	}
	if ix.tf.loading != nil {
		off, err = ix.tf.loading.add(ix, c, idx, ws)
	} else {
		off = c.sp.n
		var r region
		r, err = ix.tf.append(c.sp, idx, ws)
		c.sp = r
	}
	if err != nil {
		return 0, 0, old, err
	}
	if found {
		err = ix.vf.write(c.vecs, c.vpos[slot], q)
	} else {
		pos, err = ix.appendVec(c, q)
	}
	if err != nil {
		c.garbage += len(idx) // written, referred to by no slot
	}
	return off, pos, old, err
}

// appendVec writes q at the end of c's region, moving the region to a
// larger one when it is full (or compacting it in place of growing when
// half of it is holes), and returns its position. Caller holds mu.
func (ix *Index) appendVec(c *chat, q []int8) (uint32, error) {
	if !c.vecs.ok {
		c.vecs = ix.vf.alloc(1)
	}
	if c.vecs.n == c.vecs.capacity() {
		if 2*c.holes > c.vecs.n {
			if err := ix.compactVecs(c); err != nil {
				return 0, err
			}
		}
		if c.vecs.n == c.vecs.capacity() {
			r, err := ix.vf.grow(c.vecs)
			if err != nil {
				return 0, err
			}
			c.vecs = r
		}
	}
	if err := ix.vf.write(c.vecs, c.vecs.n, q); err != nil {
		return 0, err
	}
	c.vecs.n++
	return c.vecs.n - 1, nil
}

// compactVecs rewrites c's vectors in slot order into a region just large
// enough, dropping the holes. c is unchanged when it fails. Caller holds
// mu.
func (ix *Index) compactVecs(c *chat) error {
	bp, err := ix.vf.read(c.vecs)
	if err != nil {
		return err
	}
	defer ix.vf.put(bp)
	dim := ix.dim
	out := make([]byte, c.len()*dim)
	for s, p := range c.vpos {
		copy(out[s*dim:(s+1)*dim], (*bp)[int(p)*dim:(int(p)+1)*dim])
	}
	r := ix.vf.alloc(uint32(c.len()))
	if _, err := ix.vf.f.WriteAt(out, r.off); err != nil {
		ix.vf.release(r)
		return fmt.Errorf("embedded index: write scratch vector file: %w", err)
	}
	ix.vf.release(c.vecs)
	r.n = uint32(c.len())
	c.vecs, c.holes = r, 0
	for s := range c.vpos {
		c.vpos[s] = uint32(s)
	}
	return nil
}

func (ix *Index) undf(terms []uint32) {
	for _, t := range terms {
		if ix.df[t]--; ix.df[t] <= 0 {
			delete(ix.df, t)
		}
	}
}

// forget releases what point slot of c holds outside c (labels, document
// frequencies, the count) before c drops it; b is c's arena (termFile.all,
// nil when it could not be read: the document frequencies of its terms
// then stay counted). Caller holds mu.
func (ix *Index) forget(c *chat, b *termBuf, slot int) {
	delete(c.items, c.seqs[slot])
	ix.labels.release(c.userOf(slot))
	ix.labels.release(c.agentOf(slot))
	if b != nil {
		terms, _ := c.terms(b, slot)
		ix.undf(terms)
	}
	ix.n--
}

// Delete removes every point matching f, from the file and from memory.
// The points are chosen in memory, by the same matcher as queries: whole
// chats when every point of a chat in scope matches, else by key.
func (ix *Index) Delete(ctx context.Context, f rag.Filter) error {
	if f.Tenant == "" {
		return errors.New("embedded index: delete without tenant")
	}
	defer ix.scrub.Soon() // the deleted points' text must leave the WAL too
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if ix.isClosed() {
		return ErrClosed
	}
	// Writers hold wmu, so what is chosen here is still there below.
	ix.mu.RLock()
	m := ix.matcher(f)
	var whole []*chat
	some := map[*chat][]int64{}
	if !m.none {
		for _, c := range ix.scope(f) {
			if m.all() {
				whole = append(whole, c)
				continue
			}
			for i, key := range c.seqs {
				if m.ok(c, i) {
					some[c] = append(some[c], key)
				}
			}
		}
	}
	ix.mu.RUnlock()
	if len(whole) == 0 && len(some) == 0 {
		return nil
	}
	if err := ix.deleteRows(ctx, f.Tenant, whole, some); err != nil {
		return sqlitefull.Mark("embedded index", err) // an erase on a full disk is storage_full
	}
	ix.payloads.clear()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.drop(f.Tenant, whole, some)
}

// drop removes from memory whole chats and the points with these keys
// (ascending per chat), which the file no longer has. An error reading a
// chat's arena (for its terms' document frequencies) is returned once
// everything is dropped. Caller holds mu.
func (ix *Index) drop(tenantID string, whole []*chat, some map[*chat][]int64) error {
	var errs []error
	arena := func(c *chat) *termBuf {
		b, err := ix.tf.all(c.sp)
		errs = append(errs, err)
		return b
	}
	tn := ix.tenants[tenantID]
	for _, c := range whole {
		b := arena(c)
		for i := range c.seqs {
			ix.forget(c, b, i)
		}
		ix.tf.put(b)
		ix.dropChat(tn, c)
	}
	for c, keys := range some {
		b := arena(c)
		c.keep(func(i int) bool { _, found := slices.BinarySearch(keys, c.seqs[i]); return !found },
			func(i int) { ix.forget(c, b, i) })
		ix.tf.put(b)
		if c.len() == 0 {
			ix.dropChat(tn, c)
			continue
		}
		if 2*c.holes > c.vecs.n {
			_ = ix.compactVecs(c) // on failure the holes stay: space, not wrong answers
		}
		ix.maybeCompact(c)
		ix.res.dropPostings(c)         // their slots moved
		if 2*c.len() < ix.sketchFrom { // well below the size that uses them: give the rows back
			ix.res.drop(c)
		} else if c.rows != nil { // keep may have shrunk them
			ix.res.grew(c, int64(cap(c.rows))-c.resBytes)
		}
	}
	if len(tn.chats) == 0 {
		delete(ix.tenants, tenantID)
	}
	return errors.Join(errs...)
}

// dropChat removes c, whose points are forgotten, from tn. Caller holds mu.
func (ix *Index) dropChat(tn *tenant, c *chat) {
	ix.vf.release(c.vecs)
	ix.tf.release(c.sp)
	ix.res.drop(c)
	delete(tn.chats, c.id)
}

// deleteRows deletes whole chats and the points with these keys (ascending
// per chat) from the file, in one transaction.
func (ix *Index) deleteRows(ctx context.Context, tenantID string, whole []*chat, some map[*chat][]int64) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("embedded index: delete: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, c := range whole {
		if _, err := tx.ExecContext(ctx, `DELETE FROM points WHERE tenant = ? AND chat_id = ?`, tenantID, c.id); err != nil {
			return fmt.Errorf("embedded index: delete chat %s/%s: %w", tenantID, c.id, err)
		}
	}
	for c, keys := range some {
		if _, err := tx.ExecContext(ctx, `DELETE FROM points WHERE tenant = ? AND chat_id = ? AND seq IN (SELECT value FROM json_each(?))`,
			tenantID, c.id, encodeSeqs(keys)); err != nil {
			return fmt.Errorf("embedded index: delete points of %s/%s: %w", tenantID, c.id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedded index: delete commit: %w", err)
	}
	return nil
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
	if ix.scrub != nil {
		ix.scrub.Close()
		errs = append(errs, ix.cpdb.Close())
	}
	for _, st := range []*sql.Stmt{ix.readRange, ix.readSeek, ix.readExtraStmt, ix.readExtraSeek, ix.upsert} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if ix.rdb != ix.db {
		errs = append(errs, ix.rdb.Close())
	}
	if ix.vf != nil {
		errs = append(errs, ix.vf.close())
	}
	if ix.tf != nil {
		errs = append(errs, ix.tf.close())
	}
	return errors.Join(append(errs, ix.db.Close())...)
}
