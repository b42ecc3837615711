package rag_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/contextd/contextd/rag"
)

// fullIndex fails every upsert as a full disk does.
type fullIndex struct{ rag.Index }

func (fullIndex) Upsert(context.Context, []rag.Point) error {
	return fmt.Errorf("embedded: upsert: %w", syscall.ENOSPC)
}

// TestIndexerReportsFailedPasses: a pass that fails (here: the index's disk
// is full) is told to OnError, which readiness uses to mark storage full.
func TestIndexerReportsFailedPasses(t *testing.T) {
	e := newEnv(t, nil)
	e.ixr.Index = fullIndex{e.index}
	var mu sync.Mutex
	var got []error
	e.ixr.OnError = func(err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.ixr.Run(ctx) }()
	e.store.add("t", "a", "u", "a", "a turn to index")
	e.ixr.Kick()
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && errors.Is(got[0], syscall.ENOSPC)
	})
}
