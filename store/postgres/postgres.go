// Package postgres is contextd's production memory.Store on PostgreSQL (pgx
// v5, pgxpool). Schema migrations are embedded and applied at Open under an
// advisory lock, so replicas starting together do not race.
//
// Every Append is one transaction that locks the chat row (INSERT ... ON
// CONFLICT DO NOTHING, then SELECT ... FOR UPDATE), so seqs stay gap-free
// with any number of replicas. Errors caused by an unreachable server wrap
// memory.ErrUnavailable; the pool reconnects by itself once the server is
// back.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrateLockKey is the pg_advisory_xact_lock key serialising migrations.
const migrateLockKey int64 = 0x636f6e7465787464 // "contextd"

// Store is the PostgreSQL memory.Store. Safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

var _ memory.Backend = (*Store)(nil)

// Open connects to dsn (a postgres:// URL or keyword/value string; pool
// settings such as pool_max_conns are read from it) and migrates the
// database to the current schema. A server that cannot be reached is an
// error wrapping memory.ErrUnavailable.
func Open(ctx context.Context, dsn string) (*Store, error) {
	pool, err := newPool(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool, now: func() time.Time { return time.Now().UTC() }}, nil
}

// Migrate applies the embedded migrations to the database at dsn and
// returns (for `contextd migrate`).
func Migrate(ctx context.Context, dsn string) error {
	pool, err := newPool(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	return migrate(ctx, pool)
}

func newPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	if dsn == "" {
		return nil, errors.New("postgres: empty DSN (storage.postgres_dsn)")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The error text may carry the DSN; pgx redacts the password.
		return nil, fmt.Errorf("postgres: parse DSN: %w", err)
	}
	if !strings.Contains(dsn, "default_query_exec_mode") {
		// Plan every statement with its actual parameters. With pgx's default
		// (named prepared statements), PostgreSQL soon switches to a generic
		// plan chosen while the tables were small, e.g. a sequential scan of
		// messages, and keeps it as they grow until the next ANALYZE.
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrap("connect", err)
	}
	return pool, nil
}

// migrate applies, in one transaction holding an advisory lock, every
// embedded migration not yet recorded in schema_migrations.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	sort.Strings(files)
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return err
		}
		applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return err
		}
		done := map[int]bool{}
		for _, v := range applied {
			done[int(v)] = true
		}
		for _, f := range files {
			name := path.Base(f)
			num, _, ok := strings.Cut(name, "_")
			version, err := strconv.Atoi(num)
			if !ok || err != nil {
				return fmt.Errorf("migration %s: name must start with a number and '_'", name)
			}
			if done[version] {
				continue
			}
			body, err := migrations.ReadFile(f)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, version, name); err != nil {
				return fmt.Errorf("migration %s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return wrap("migrate", err)
	}
	return nil
}

// Ping checks the server answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return wrap("ping", err)
	}
	return nil
}

// Close closes the pool. It is safe to call more than once.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// wrap prefixes err with the operation and, when the server could not be
// reached, with memory.ErrUnavailable.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if !errors.Is(err, memory.ErrUnavailable) && unavailable(err) {
		return fmt.Errorf("postgres: %s: %w: %w", op, memory.ErrUnavailable, err)
	}
	if !errors.Is(err, memory.ErrFull) && diskFull(err) {
		return fmt.Errorf("postgres: %s: %w: %w", op, memory.ErrFull, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// diskFull reports whether the server refused a write for want of disk
// (SQLSTATE 53100 disk_full): retry once space is freed, not a bug.
func diskFull(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "53100"
}

// unavailable reports whether err means the server is down, restarting or
// unreachable, as opposed to a problem with the request.
func unavailable(err error) bool {
	if errors.Is(err, memory.ErrNotFound) || errors.Is(err, memory.ErrConflict) || errors.Is(err, memory.ErrCursorMoved) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"): // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // admin/crash shutdown, cannot connect now
			return true
		case pgErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
