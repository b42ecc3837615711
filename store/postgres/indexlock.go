package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
)

// ErrIndexHeld is HoldEmbeddedIndex's error when another process holds the
// lock.
var ErrIndexHeld = errors.New("another contextd on this Postgres database keeps its own embedded vector index")

// embeddedIndexLockKey is the session-level advisory lock key of
// HoldEmbeddedIndex (migrateLockKey is another).
const embeddedIndexLockKey int64 = 0x636f6e7478646978 // "contxdix"

// HoldEmbeddedIndex takes, for as long as the returned Closer is open (or
// the process lives: the lock goes with its connection), the lock that
// says one process serves this database with an embedded vector index. The
// index is a file of that process, while the marks saying which turns are
// indexed, and the deletions, are in the shared database: a second
// replica's index would miss the turns the first one indexed and keep
// serving the vectors of turns the first one deleted. Replicas share a
// vector store (vector.driver: qdrant); ErrIndexHeld refuses the second.
func HoldEmbeddedIndex(ctx context.Context, dsn string) (io.Closer, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DSN: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, embeddedIndexLockKey).Scan(&ok); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("postgres: embedded index lock: %w", err)
	}
	if !ok {
		_ = conn.Close(ctx)
		return nil, ErrIndexHeld
	}
	return connCloser{conn}, nil
}

type connCloser struct{ conn *pgx.Conn }

func (c connCloser) Close() error { return c.conn.Close(context.Background()) }
