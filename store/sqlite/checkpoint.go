package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/contextd/contextd/internal/walscrub"
)

// Checkpoints run off the write path. With SQLite's default (automatic
// checkpoints of 1,000 pages), the transaction whose commit crosses the
// threshold copies the WAL into the database and fsyncs both before it
// returns — while holding the store's only write connection, so every
// append, lease and background batch queued behind it waited out the
// fsyncs (tens to hundreds of milliseconds on a busy disk). The writer
// connection has wal_autocheckpoint off and a goroutine checkpoints on its
// own connection instead, PASSIVE (it never blocks a reader or the writer:
// it copies what no reader still needs and tries again next time).

// checkpointEvery is how often the checkpointer runs; between two runs the
// WAL grows by what the writer committed meanwhile.
const checkpointEvery = time.Second

// checkpointer runs PASSIVE checkpoints on db every interval until Close,
// and truncates the WAL scrubDelay after an erase (scrubSoon): a PASSIVE
// checkpoint leaves the log's frames, the erased text among them, in the
// file (internal/walscrub).
type checkpointer struct {
	db    *sql.DB
	scrub *walscrub.Scrubber
	stop  chan struct{}
	done  chan struct{}
}

func startCheckpointer(db *sql.DB, every, scrubDelay time.Duration) *checkpointer {
	c := &checkpointer{db: db, scrub: walscrub.Start(db, scrubDelay, nil), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run(every)
	return c
}

// scrubSoon asks for the WAL's truncation: something was erased. A nil
// checkpointer (an in-memory store) has no WAL.
func (c *checkpointer) scrubSoon() {
	if c != nil {
		c.scrub.Soon()
	}
}

func (c *checkpointer) run(every time.Duration) {
	defer close(c.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			// A failure (e.g. the file is gone) is retried on the next
			// tick; the WAL only grows meanwhile.
			_ = c.checkpoint(context.Background(), "PASSIVE")
		}
	}
}

func (c *checkpointer) checkpoint(ctx context.Context, mode string) error {
	var busy, logFrames, done int
	return c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logFrames, &done)
}

// close stops the goroutine and, the writer being idle by then, folds the
// whole WAL into the database (TRUNCATE), so a closed store is one file.
func (c *checkpointer) close() error {
	c.scrub.Close()
	close(c.stop)
	<-c.done
	_ = c.checkpoint(context.Background(), "TRUNCATE")
	return c.db.Close()
}
