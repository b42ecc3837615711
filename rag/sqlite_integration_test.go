package rag_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/store/sqlite"
)

func openSQLite(t testing.TB, dir string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "contextd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openIndex opens the embedded index of dir (128 dimensions); the caller
// closes it (a test may close and open it again).
func openIndex(t testing.TB, dir string) *embedded.Index {
	t.Helper()
	idx, err := embedded.Open(context.Background(), filepath.Join(dir, "vectors.db"), 128)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func appendTurns(t testing.TB, st memory.Core, tenant, chat, user string, contents ...string) {
	t.Helper()
	msgs := make([]memory.Message, len(contents))
	for i, c := range contents {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		msgs[i] = memory.Message{Role: role, Content: c, CreatedAt: time.Unix(1700000000+int64(i), 0)}
	}
	if _, err := st.Append(context.Background(), memory.AppendRequest{Chat: memory.ChatKey{Tenant: tenant, ChatID: chat},
		UserID: user, Agent: "a", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
}

// TestWithSQLiteStore runs the indexer and retriever on the real SQLite
// store, and restarts both the store and the index in between.
func TestWithSQLiteStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openSQLite(t, dir)
	emb := rag.NewHashingEmbedder(128)
	idx := openIndex(t, dir)
	turns := filler(30, "hiking")
	turns[4] = "my passport number ends in 4417"
	appendTurns(t, st, "t", "c", "u", turns...)
	ixr := &index.Indexer{Store: st, Embedder: emb, Index: idx, Owner: "it", BatchSize: 7}
	if n, err := ixr.DrainOnce(ctx); err != nil || n != 30 {
		t.Fatalf("drain: %d %v", n, err)
	}
	if b, _ := st.BacklogSizes(ctx); b.Unindexed != 0 {
		t.Fatalf("backlog %d", b.Unindexed)
	}
	idx.Close()

	idx = openIndex(t, dir)
	defer idx.Close()
	ret := &rag.Retriever{Embedder: emb, Index: idx, Store: st}
	got, err := ret.Retrieve(ctx, rag.Request{Tenant: "t", ChatID: "c", Query: "what is my passport number?", K: 1, Neighbors: 1, ExcludeFromSeq: 25})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(seqsOf(got), " "); s != "c/4n c/5 c/6n" {
		t.Fatalf("got %s, want c/4n c/5 c/6n", s)
	}
	if got[0].Content != turns[3] || got[2].Role != "assistant" {
		t.Errorf("neighbour content from the store: %+v", got)
	}
}

// BenchmarkIndexerSQLite drains 20 chats × 250 turns from the real SQLite
// store into the embedded index.
func BenchmarkIndexerSQLite(b *testing.B) {
	s := newSynth(3)
	ctx := context.Background()
	var turns int
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		st := openSQLite(b, dir)
		idx, err := embedded.Open(ctx, filepath.Join(dir, "vectors.db"), 384)
		if err != nil {
			b.Fatal(err)
		}
		for c := 0; c < 20; c++ {
			texts := make([]string, 250)
			for j := range texts {
				texts[j] = s.turn()
			}
			appendTurns(b, st, "t", fmt.Sprint("c", c), "u", texts...)
		}
		ixr := &index.Indexer{Store: st, Embedder: rag.NewHashingEmbedder(384), Index: idx, Owner: "bench", BatchSize: 64}
		b.StartTimer()
		start := time.Now()
		n, err := ixr.DrainOnce(ctx)
		elapsed += time.Since(start)
		turns += n
		b.StopTimer()
		if err != nil || n != 5000 {
			b.Fatalf("indexed %d: %v", n, err)
		}
		idx.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(turns)/elapsed.Seconds(), "turns/s")
}

// A speaker's name is indexed with the turn: in a group chat "which shirt
// size is dan having" asks for what Dan said, though his turn never
// names him (the turns naming shirts and sizes still rank first).
// The hit shows the turn's own text.
func TestSpeakerNameIsIndexed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openSQLite(t, dir)
	emb := rag.NewHashingEmbedder(128)
	idx := openIndex(t, dir)
	defer idx.Close()
	msgs := []memory.Message{
		{Role: memory.RoleUser, Name: "Kev", Content: "kit!! new shirts from KitShack, orange with black numbers. need sizes + numbers by friday"},
		{Role: memory.RoleUser, Name: "Jonno", Content: "M, number 9"},
		{Role: memory.RoleUser, Name: "Sami", Content: "L for me, number 7. what size are the shorts?"},
		{Role: memory.RoleUser, Name: "Kev", Content: "shorts are optional, most of us have black ones"},
		{Role: memory.RoleUser, Name: "Dan", Content: "actually make mine XL not L, i aint been to the gym since may"},
	}
	for i, c := range filler(20, "football") {
		msgs = append(msgs, memory.Message{Role: memory.RoleUser, Name: []string{"Kev", "Jonno", "Sami"}[i%3], Content: c})
	}
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: memory.ChatKey{Tenant: "t", ChatID: "c"}, Agent: "a", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if _, err := (&index.Indexer{Store: st, Embedder: emb, Index: idx, Owner: "it"}).DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := (&rag.Retriever{Embedder: emb, Index: idx, Store: st}).Retrieve(ctx, rag.Request{Tenant: "t", ChatID: "c", Query: "which shirt size is dan having", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	var dan *rag.Turn
	for i := range got {
		if got[i].Seq == 5 {
			dan = &got[i]
		}
	}
	if dan == nil || dan.Content != msgs[4].Content {
		t.Fatalf("got %v, want Dan's turn 5 among the three best, with its own text", seqsOf(got))
	}
}
