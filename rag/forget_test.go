package rag_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// TestIndexerDeletesTombstones: a deleted message found in the backlog has
// its point deleted, not embedded; an episode marked for rebuild loses its
// point until it is rebuilt; TurnEraser deletes a turn's point alone.
func TestIndexerDeletesTombstones(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openSQLite(t, dir)
	idx, err := embedded.Open(ctx, filepath.Join(dir, "vectors.db"), 64)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	key := memory.ChatKey{Tenant: "t", ChatID: "c"}
	appendTurns(t, st, "t", "c", "u", filler(8, "sailing")...)
	if _, err := st.CloseEpisodes(ctx, key, 0, []memory.Episode{{FromSeq: 1, ToSeq: 4, Short: "Sailing plans."}}); err != nil {
		t.Fatal(err)
	}
	ixr := &index.Indexer{Store: st, Embedder: rag.NewHashingEmbedder(64), Index: idx, Owner: "it", Kinds: []memory.WorkKind{memory.IndexEpisodes}}
	if _, err := ixr.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	count := func(f rag.Filter) int {
		t.Helper()
		n, err := idx.Count(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	all := rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}
	if n := count(all); n != 9 {
		t.Fatalf("%d points before the delete, want 8 turns and 1 episode", n)
	}
	msgs, _ := st.Messages(ctx, key, 0, 10)
	if _, err := st.DeleteMessage(ctx, key, msgs[2].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ixr.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(rag.TurnFilter(key, 3)); n != 0 {
		t.Errorf("%d points of the deleted turn left", n)
	}
	if n := count(rag.Filter{Tenant: "t", ChatIDs: []string{"c"}, Kinds: []string{memory.KindEpisode}}); n != 0 {
		t.Errorf("%d episode points left while the episode waits for its rebuild", n)
	}
	if n := count(all); n != 7 {
		t.Errorf("%d points left, want the 7 other turns", n)
	}
	if b, _ := st.BacklogSizes(ctx); b.Unindexed != 0 {
		t.Errorf("tombstone left in the backlog: %+v", b)
	}
	// The eraser takes one turn's points, nothing else.
	if err := (rag.PointEraser{Index: idx}).EraseTurn(ctx, memory.Deletion{Chat: key, Seq: 5}); err != nil {
		t.Fatal(err)
	}
	if n := count(all); n != 6 || count(rag.TurnFilter(key, 5)) != 0 {
		t.Errorf("after EraseTurn: %d points, want 6", n)
	}
}
