package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// fill sets every settable field of v (recursively through structs) to a
// non-zero value, with one-element slices and non-nil pointers.
func fill(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(1, 0).UTC()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			fill(t, v.Field(i))
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(t, s.Index(0))
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem())
		v.Set(p)
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("fill: unhandled kind %s (%s): teach cloneRecord and this test about it", v.Kind(), v.Type())
	}
}

// shared reports the first slice or pointer of a and b (same type) that
// points at the same memory.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Pointer:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			return path
		}
	}
	return ""
}

// TestCloneRecordDeep guards the head cache against a new list or pointer
// field in memory.SummaryRecord that SummaryRecord.Copy would share with callers.
func TestCloneRecordDeep(t *testing.T) {
	var r memory.SummaryRecord
	fill(t, reflect.ValueOf(&r).Elem())
	c := r.Copy()
	if !reflect.DeepEqual(*c, r) {
		t.Fatalf("clone differs:\n%+v\n%+v", *c, r)
	}
	if p := shared(reflect.ValueOf(*c), reflect.ValueOf(r), "SummaryRecord"); p != "" {
		t.Errorf("clone shares %s with the original", p)
	}
	// nil and empty lists stay as they were.
	var e memory.SummaryRecord
	e.Topics = []string{}
	c = e.Copy()
	if c.Topics == nil || len(c.Topics) != 0 || c.Entities != nil || c.ParentID != nil {
		t.Errorf("clone of empty/nil lists = %+v", *c)
	}
}

func TestHeadCacheBound(t *testing.T) {
	c := newHeadCache(3)
	for i := 0; i < 10; i++ {
		k := memory.ChatKey{Tenant: "t", ChatID: fmt.Sprint(i)}
		c.put(k, int64(i), &memory.SummaryRecord{ID: fmt.Sprint("r", i)})
		if len(c.m) > 3 {
			t.Fatalf("%d entries after %d puts, bound 3", len(c.m), i+1)
		}
		if _, ok := c.get(k, int64(i), fmt.Sprint("r", i)); !ok {
			t.Fatalf("entry %d missing right after put", i)
		}
	}
	k := memory.ChatKey{Tenant: "t", ChatID: "9"}
	for _, tc := range []struct {
		pk   int64
		id   string
		want bool
	}{{9, "r9", true}, {8, "r9", false}, {9, "r8", false}} {
		if _, ok := c.get(k, tc.pk, tc.id); ok != tc.want {
			t.Errorf("get(pk %d, id %s) = %v, want %v", tc.pk, tc.id, ok, tc.want)
		}
	}
	// An older head (a slow reader) does not replace a newer one.
	c.put(k, 9, &memory.SummaryRecord{ID: "deeper", Depth: 2})
	c.put(k, 9, &memory.SummaryRecord{ID: "older", Depth: 1})
	if _, ok := c.get(k, 9, "deeper"); !ok {
		t.Error("older head replaced the deeper one")
	}
	c.drop(k)
	if _, ok := c.get(k, 9, "deeper"); ok {
		t.Error("entry survived drop")
	}
}

func summaryRec(narrative string, to int64) memory.SummaryRecord {
	return memory.SummaryRecord{Summary: memory.Summary{Narrative: narrative, Topics: []string{narrative},
		CoveredFromSeq: 1, CoveredToSeq: to}, FromSeq: 1, ToSeq: to}
}

func appendTurns(t *testing.T, s *Store, k memory.ChatKey, n int) {
	t.Helper()
	msgs := make([]memory.Message, n)
	for i := range msgs {
		msgs[i] = memory.Message{Role: memory.RoleUser, Content: fmt.Sprint("turn ", i)}
	}
	if _, err := s.Append(context.Background(), memory.AppendRequest{Chat: k, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
}

func wantHead(t *testing.T, s *Store, k memory.ChatKey, id, narrative string) {
	t.Helper()
	h, err := s.SummaryHead(context.Background(), k)
	if err != nil {
		t.Fatalf("SummaryHead: %v", err)
	}
	if h == nil || h.ID != id || h.Narrative != narrative || len(h.Topics) != 1 || h.Topics[0] != narrative {
		t.Fatalf("SummaryHead = %+v, want id %s narrative %q", h, id, narrative)
	}
}

// TestHeadCacheTwoHandles: two stores on one file (two processes). Each
// caches heads; writes through the other one must never be hidden by the
// cache — a new head, a deleted chat, and a chat deleted and created again
// under the same key (which may get the same row id).
func TestHeadCacheTwoHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}

	appendTurns(t, a, k, 4)
	r1, err := memory.AppendSummary(ctx, a, k, 0, summaryRec("one", 2))
	if err != nil {
		t.Fatal(err)
	}
	wantHead(t, a, k, r1.ID, "one")
	wantHead(t, b, k, r1.ID, "one")

	// The caller may change what it got; the cache keeps its own copy.
	h, _ := a.SummaryHead(ctx, k)
	h.Topics[0], h.Narrative = "changed", "changed"
	wantHead(t, a, k, r1.ID, "one")

	// A new head written by b is seen by a.
	r2, err := memory.AppendSummary(ctx, b, k, 2, summaryRec("two", 4))
	if err != nil {
		t.Fatal(err)
	}
	wantHead(t, a, k, r2.ID, "two")

	// Deleted by b: a reports not found, not its cached head.
	if err := b.DeleteChat(ctx, k); err != nil {
		t.Fatal(err)
	}
	if h, err := a.SummaryHead(ctx, k); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("SummaryHead after delete = %+v, %v; want ErrNotFound", h, err)
	}

	// Cached in a again, then deleted and created again by b with a
	// summary covering the same turns: a must see the new record.
	appendTurns(t, a, k, 4)
	r3, err := memory.AppendSummary(ctx, a, k, 0, summaryRec("three", 4))
	if err != nil {
		t.Fatal(err)
	}
	wantHead(t, a, k, r3.ID, "three")
	if err := b.DeleteChat(ctx, k); err != nil {
		t.Fatal(err)
	}
	appendTurns(t, b, k, 4)
	if h, err := a.SummaryHead(ctx, k); err != nil || h != nil {
		t.Fatalf("SummaryHead of the re-created chat before any summary = %+v, %v; want nil", h, err)
	}
	r4, err := memory.AppendSummary(ctx, b, k, 0, summaryRec("four", 4))
	if err != nil {
		t.Fatal(err)
	}
	wantHead(t, a, k, r4.ID, "four")
}

// TestHeadAfterAppendSummary: the head cached by a summary extension is what a
// fresh read from the database gives, field for field.
func TestHeadAfterAppendSummary(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	appendTurns(t, s, k, 3)
	rec := summaryRec("bad \xff utf-8 <b>&</b>", 3)
	rec.Summary.UpdatedAt = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
	rec.Entities = []memory.Entity{{Name: "n", Type: "t", Details: "d"}}
	if _, err := memory.AppendSummary(ctx, s, k, 0, rec); err != nil {
		t.Fatal(err)
	}
	cached, err := s.SummaryHead(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(ctx, path) // an empty cache
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	read, err := fresh.SummaryHead(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cached, read) {
		t.Errorf("cached head differs from the stored one:\n%+v\n%+v", cached, read)
	}
}

// TestHeadConcurrent: readers of SummaryHead while the summary advances
// (from this store and from a second handle on the file) only ever see
// whole records, never going back. Run with -race.
func TestHeadConcurrent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	const steps = 30
	appendTurns(t, a, k, steps)
	done := make(chan struct{})
	errs := make(chan error, 4)
	for r := 0; r < 3; r++ {
		go func() {
			var last int64
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				h, err := a.SummaryHead(ctx, k)
				if err != nil {
					errs <- err
					return
				}
				if h == nil {
					continue
				}
				if h.Narrative != fmt.Sprint("to ", h.CoveredToSeq) || h.Depth != int(h.CoveredToSeq-1) {
					errs <- fmt.Errorf("torn head %+v", h)
					return
				}
				if h.CoveredToSeq < last {
					errs <- fmt.Errorf("head went back from %d to %d", last, h.CoveredToSeq)
					return
				}
				last = h.CoveredToSeq
				h.Topics[0] = "scribble" // must not reach the cache
			}
		}()
	}
	for to := int64(1); to <= steps; to++ {
		w := a
		if to%2 == 0 {
			w = b
		}
		if _, err := memory.AppendSummary(ctx, w, k, to-1, summaryRec(fmt.Sprint("to ", to), to)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for r := 0; r < 3; r++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	h, err := a.SummaryHead(ctx, k)
	if err != nil || h == nil || h.CoveredToSeq != steps || h.Topics[0] != fmt.Sprint("to ", steps) {
		t.Errorf("final head = %+v, %v", h, err)
	}
}
