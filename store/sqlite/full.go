package sqlite

import "github.com/contextd/contextd/internal/sqlitefull"

// classify marks a write's error memory.ErrFull when it means the disk is
// full (sqlitefull.Mark).
func classify(err error) error { return sqlitefull.Mark("sqlite", err) }
