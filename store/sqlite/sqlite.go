// Package sqlite is contextd's embedded memory.Store: one SQLite file (pure
// Go driver modernc.org/sqlite) in WAL mode, schema migrations embedded in
// the binary and applied at Open.
//
// Writes go through a single connection and every write transaction starts
// with BEGIN IMMEDIATE, so writers in this process queue in Go and writers in
// other processes wait on SQLite's lock (busy_timeout) instead of failing
// with SQLITE_BUSY. Reads use a separate pool; WAL lets them run alongside
// the writer.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/contextd/contextd/internal/walscrub"
	"github.com/contextd/contextd/memory"
	msqlite "modernc.org/sqlite" // also registers driver "sqlite"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite memory.Store. Safe for concurrent use.
type Store struct {
	w *sql.DB // single connection: every write
	r *sql.DB // reads (the same handle as w for in-memory databases)
	// rs and ws are the statements prepared once at Open (on r and w), so
	// that SQLite does not parse them again for every call; database/sql
	// prepares each on every connection of its pool when first used there.
	rs readStmts
	ws writeStmts
	qs queryStmts
	// cp checkpoints the WAL off the write path (nil in memory).
	cp *checkpointer
	// heads caches decoded summary heads; every read validates its entry
	// against the database.
	heads *headCache
	// rows caches chat rows, dropped by this process's writes (rowcache.go).
	rows *chatRows
	// now is the clock (UTC); tests of the store use the real one.
	now func() time.Time
	// group queues concurrent appends into one write transaction.
	group grouper
}

var _ memory.Backend = (*Store)(nil)

// readConns is the read pool's size. Each request makes a few short point
// reads (chat row, head id, profile version) while the background workers
// make long ones (pages of turns); with too few connections requests queue
// for one in database/sql, which wakes waiters in random order — a tail of
// tens of milliseconds under load. Connections are cheap (the driver is pure
// Go; each keeps a page cache of up to 2 MB).
const readConns = 16

// busyTimeoutMS bounds how long a writer waits for another process's lock.
const busyTimeoutMS = 10000

// Open opens (creating it and its parent directory when needed) the database
// at path and migrates it to the current schema.
//
// path is a file path, or ":memory:" / a "file:" URI with mode=memory for a
// private in-memory database (one connection, so reads queue behind writes;
// meant for tests). Other "file:" URIs are passed to SQLite as they are, with
// the store's pragmas added.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := options{scrubDelay: walscrub.DefaultDelay}
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" {
		return nil, errors.New("sqlite: empty path")
	}
	inMemory := path == ":memory:" || (strings.HasPrefix(path, "file:") &&
		(strings.Contains(path, "mode=memory") || strings.HasPrefix(path, "file::memory:")))
	if !inMemory && !strings.HasPrefix(path, "file:") {
		if strings.ContainsAny(path, "?#") {
			return nil, fmt.Errorf("sqlite: path %q: '?' and '#' are not allowed (use a file: URI)", path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("sqlite: create directory: %w", err)
		}
	}
	readDSN, writeDSN := dsns(path, inMemory, o)
	var h handles
	if !inMemory && !strings.HasPrefix(path, "file:") {
		// Without the handles file (a file system without OFD locks, say)
		// the chat-row cache stays off: slower, never wrong.
		h, _ = openHandles(path)
	}
	rows := newChatRows(h, rowCacheSize)
	w := sql.OpenDB(hookedConnector{dsn: writeDSN, hook: rows.hook})
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	s := &Store{w: w, r: w, heads: newHeadCache(headCacheSize), rows: rows,
		now: func() time.Time { return time.Now().UTC() }}
	if !inMemory {
		if err := s.openReaders(readDSN, o); err != nil {
			s.Close() // the writer and the handles file
			return nil, err
		}
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, err
	}
	s.scrubAtStart(ctx)
	return s, nil
}

// dsns are the data source names of the read pool and of the one writer.
func dsns(path string, inMemory bool, o options) (readDSN, writeDSN string) {
	params := url.Values{}
	params.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMS)+")")
	params.Add("_pragma", "foreign_keys(1)")
	params.Add("_pragma", "synchronous(NORMAL)")
	params.Add("_pragma", "journal_mode(WAL)")
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	// Each read connection keeps a small page cache: under writes SQLite
	// drops a reader's cache at every commit anyway, and 16 connections
	// with the default 2 MB each held up to 32 MB outside Go's heap and
	// its memory limit.
	readParams := url.Values{}
	for k, v := range params {
		readParams[k] = slices.Clone(v) // not shared: the writer's pragmas are added to params below
	}
	readParams.Add("_pragma", "cache_size(-512)")
	readDSN = path + sep + readParams.Encode()
	params.Set("_txlock", "immediate")
	// What is deleted (an erased chat, a forgotten turn) is overwritten,
	// not left in free pages for whoever has the file; only the writer
	// deletes.
	params.Add("_pragma", "secure_delete(1)")
	if o.maxPages > 0 {
		// Only writes grow the file: the cap on the writer is the cap.
		params.Add("_pragma", "max_page_count("+strconv.Itoa(o.maxPages)+")")
	}
	if !inMemory {
		// The checkpointer does it off the write path (checkpoint.go).
		params.Add("_pragma", "wal_autocheckpoint(0)")
	}
	return readDSN, path + sep + params.Encode()
}

// openReaders opens the read pool and the checkpointer's connection of a
// store on a file.
func (s *Store) openReaders(readDSN string, o options) error {
	r, err := sql.Open("sqlite", readDSN)
	if err != nil {
		return fmt.Errorf("sqlite: open: %w", err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	s.r = r
	cp, err := sql.Open("sqlite", readDSN)
	if err != nil {
		return fmt.Errorf("sqlite: open: %w", err)
	}
	cp.SetMaxOpenConns(1)
	s.cp = startCheckpointer(cp, checkpointEvery, o.scrubDelay)
	return nil
}

// Option tunes Open.
type Option func(*options)

type options struct {
	scrubDelay time.Duration
	maxPages   int
}

// MaxPages caps the database file at n pages (PRAGMA max_page_count on
// the writer); a write past it fails as a full disk would (memory.ErrFull).
// n ≤ 0 leaves SQLite's own limit. A cap below the file's size is the
// file's size: SQLite never shrinks a database to meet it.
func MaxPages(n int) Option {
	return func(o *options) { o.maxPages = n }
}

// ScrubDelay is how long after an erase (a message deleted, a chat or
// profile erased, a step of the rebuild that follows) the WAL is
// truncated; ≤ 0 is walscrub.DefaultDelay.
func ScrubDelay(d time.Duration) Option {
	return func(o *options) { o.scrubDelay = d }
}

// scrubAtStart truncates the WAL a crash left: it may hold what was
// erased before the crash. When it cannot now, the checkpointer tries
// again after its delay.
func (s *Store) scrubAtStart(ctx context.Context) {
	if s.cp == nil {
		return
	}
	if err := walscrub.Truncate(ctx, s.cp.db); err != nil {
		s.cp.scrubSoon()
	}
}

// migrate applies the embedded migrations not yet recorded in
// schema_migrations, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	sort.Strings(files)
	for _, f := range files {
		name := filepath.Base(f)
		num, _, ok := strings.Cut(name, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("sqlite: migration %s: name must start with a number and '_'", name)
		}
		body, err := migrations.ReadFile(f)
		if err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		if err := s.write(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				version, name, s.now().UnixMicro())
			return err
		}); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
	}
	return nil
}

// write runs fn in a write transaction (BEGIN IMMEDIATE on the writer
// connection) and commits it when fn returns nil. A full disk's error
// wraps memory.ErrFull.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return classify(s.writeTx(ctx, fn))
}

func (s *Store) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	c := s.rows.begin()
	// Rolled back on every way out but a commit, a panic in fn included:
	// otherwise the single writer connection stays taken until ctx ends,
	// which for a background context is never.
	committed := false
	defer func() {
		if !committed {
			s.rollback(tx, c)
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := s.commit(tx, c); err != nil {
		if errors.Is(err, sql.ErrTxDone) && ctx.Err() != nil {
			// database/sql rolled the transaction back when ctx ended,
			// between fn's last statement and the commit: the caller gave
			// up, nothing was written, and it should hear that, not a
			// "transaction already rolled back" that reads like a bug.
			return fmt.Errorf("commit: %w (%w)", ctx.Err(), err)
		}
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	return nil
}

// commit and rollback end a write transaction and drop the cached chat rows
// it changed (c, from s.rows.begin) once readers see the new rows.
func (s *Store) commit(tx *sql.Tx, c *changed) error {
	ch := s.rows.end(c)
	err := tx.Commit()
	s.rows.invalidate(ch, err == nil)
	return err
}

func (s *Store) rollback(tx *sql.Tx, c *changed) {
	ch := s.rows.end(c)
	_ = tx.Rollback()
	s.rows.invalidate(ch, false)
}

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.r.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close closes the statements and the database. It is safe to call more
// than once.
func (s *Store) Close() error {
	err := errors.Join(s.rs.close(), s.ws.close(), s.qs.close())
	if s.cp != nil {
		err = errors.Join(err, s.cp.close())
		s.cp = nil
	}
	err = errors.Join(err, s.w.Close())
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	if s.rows.handles != nil {
		err = errors.Join(err, s.rows.handles.close())
		s.rows.handles = nil
	}
	return err
}

// hookedConnector opens the writer connection with the chat-row cache's
// pre-update hook on it, on every connection database/sql opens.
type hookedConnector struct {
	dsn  string
	hook msqlite.PreUpdateHookFn
}

func (c hookedConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.Driver().Open(c.dsn)
	if err != nil {
		return nil, err
	}
	h, ok := conn.(msqlite.HookRegisterer)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("sqlite: driver connection %T takes no hooks", conn)
	}
	h.RegisterPreUpdateHook(c.hook)
	return conn, nil
}

func (hookedConnector) Driver() driver.Driver { return &msqlite.Driver{} }

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
