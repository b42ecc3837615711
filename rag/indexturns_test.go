package rag_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Under a stream of appends each chat has a turn or two pending: the
// indexer writes many chats per batch, and a long backlog still drains
// in batches of BatchSize under one lease.
func TestIndexerBatchesAcrossChats(t *testing.T) {
	cases := []struct {
		name      string
		chats     []int // pending turns per chat
		batch     int
		wantMarks int
	}{
		{"ten chats of two turns", []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 8, 3},
		{"one chat of twenty turns", []int{20}, 8, 3},
		{"small chats and a long one", []int{1, 30, 1, 1}, 16, 2}, // 1+16, then 14+1+1
		{"one turn", []int{1}, 64, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.ixr.BatchSize = tc.batch
			total := 0
			for i, n := range tc.chats {
				e.store.add("t", fmt.Sprintf("c%d", i), "u", "a", filler(n, fmt.Sprintf("topic%d", i))...)
				total += n
			}
			if n := e.drain(t); n != total {
				t.Fatalf("indexed %d, want %d", n, total)
			}
			if e.store.marks != tc.wantMarks {
				t.Errorf("%d Done(IndexTurns) calls, want %d", e.store.marks, tc.wantMarks)
			}
			if u := e.store.unindexed(); u != 0 {
				t.Errorf("backlog %d after the drain", u)
			}
			if len(e.store.leases) != 0 {
				t.Errorf("leases left behind: %v", e.store.leases)
			}
			for i, n := range tc.chats {
				chat := fmt.Sprintf("c%d", i)
				if c, _ := e.index.Count(context.Background(), rag.Filter{Tenant: "t", ChatIDs: []string{chat}}); c != n {
					t.Errorf("%s: %d points, want %d", chat, c, n)
				}
			}
		})
	}
}

// A chat deleted while its batch was embedded leaves no points, and the
// other chats of the batch are indexed and marked.
func TestIndexerBatchWithDeletedChat(t *testing.T) {
	e := newEnv(t, nil)
	e.ixr.BatchSize = 64
	ctx := context.Background()
	e.store.add("t", "kept", "u", "a", "first kept turn", "second kept turn")
	e.store.add("t", "gone", "u", "a", "short lived")
	e.store.add("t", "also", "u", "a", "another kept turn")
	gone := memory.ChatKey{Tenant: "t", ChatID: "gone"}
	e.ixr.Embedder = deleteDuring{Embedder: e.emb, del: func() { e.store.deleteChat(gone) }}
	if n := e.drain(t); n != 3 {
		t.Errorf("indexed %d, want 3 (the deleted chat's turn not counted)", n)
	}
	if e.store.marks != 1 {
		t.Errorf("%d Done(IndexTurns) calls, want 1", e.store.marks)
	}
	for chat, want := range map[string]int{"kept": 2, "gone": 0, "also": 1} {
		if c, _ := e.index.Count(ctx, rag.Filter{Tenant: "t", ChatIDs: []string{chat}}); c != want {
			t.Errorf("%s: %d points, want %d", chat, c, want)
		}
	}
	if u := e.store.unindexed(); u != 0 {
		t.Errorf("backlog %d", u)
	}
}
