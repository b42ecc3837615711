package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/pgtest"
	"github.com/contextd/contextd/memory"
)

// TestTwoReplicasAppend appends to the same chats from two stores (two
// pools, as two replicas would) at once: every chat's seqs must come out
// 1..N with no id stored twice.
func TestTwoReplicasAppend(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	replicas := []*storeT{{open(t, dsn), "a"}, {open(t, dsn), "b"}}
	chats := []memory.ChatKey{{Tenant: "t", ChatID: "c1"}, {Tenant: "t", ChatID: "c2"}, {Tenant: "u", ChatID: "c1"}}
	const workersPerReplica, batches, size = 3, 8, 4
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	start := make(chan struct{})
	for _, r := range replicas {
		for w := 0; w < workersPerReplica; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := 0; i < batches; i++ {
					k := chats[(w+i)%len(chats)]
					msgs := make([]memory.Message, size)
					for j := range msgs {
						msgs[j] = memory.Message{ID: fmt.Sprintf("%s-%d-%d-%d", r.name, w, i, j), Role: memory.RoleUser, Content: "x"}
					}
					req := memory.AppendRequest{Chat: k, Messages: msgs}
					if _, err := r.s.Append(ctx, req); err != nil {
						errs <- err
						return
					}
					// The other replica retries the same batch: all duplicates.
					other := replicas[0]
					if other == r {
						other = replicas[1]
					}
					if res, err := other.s.Append(ctx, req); err != nil || res.Appended != 0 {
						errs <- fmt.Errorf("retry on the other replica: %+v, %v", res, err)
						return
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for _, k := range chats {
		msgs, err := replicas[1].s.Messages(ctx, k, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Fatalf("%v: message %d has seq %d", k, i, m.Seq)
			}
			if ids[m.ID] {
				t.Errorf("%v: id %s stored twice", k, m.ID)
			}
			ids[m.ID] = true
		}
		total += len(msgs)
	}
	if want := len(replicas) * workersPerReplica * batches * size; total != want {
		t.Errorf("stored %d turns, want %d", total, want)
	}
}

type storeT struct {
	s    memory.Core
	name string
}

// TestTwoReplicasLease races summary workers on two replicas for one
// chat's lease: at no time may two of them hold it.
func TestTwoReplicasLease(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := open(t, dsn), open(t, dsn)
	k := memory.ChatKey{Tenant: "t", ChatID: "leased"}
	if _, err := a.Append(ctx, memory.AppendRequest{Chat: k, Messages: []memory.Message{{Role: memory.RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	var (
		holders, violations atomic.Int32
		wins                [2]atomic.Int32
		wg                  sync.WaitGroup
		errs                = make(chan error, 16)
	)
	for ri, s := range []memory.Core{a, b} {
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprintf("replica%d-worker%d", ri, w)
				for i := 0; i < 25; i++ {
					ok, err := memory.TryLease(ctx, s, k, memory.LeaseSummary, owner, time.Minute)
					if err != nil {
						errs <- err
						return
					}
					if !ok {
						continue
					}
					if holders.Add(1) != 1 {
						violations.Add(1)
					}
					wins[ri].Add(1)
					time.Sleep(time.Millisecond) // "work" while holding it
					holders.Add(-1)
					if err := memory.ReleaseLease(ctx, s, k, memory.LeaseSummary, owner); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := violations.Load(); v != 0 {
		t.Errorf("%d times two workers held the lease at once", v)
	}
	if wins[0].Load()+wins[1].Load() == 0 {
		t.Error("no worker ever got the lease")
	}
	t.Logf("lease taken %d times by replica a, %d by b", wins[0].Load(), wins[1].Load())
}

// TestServerRestart stops the server under a stream of appends: callers
// see memory.ErrUnavailable, no batch is half-written, every acknowledged
// batch survives, and the same Store works again once the server is back.
func TestServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	c := pgtest.NewCluster(t)
	s := open(t, c.NewDatabase(t))
	ctx := context.Background()
	k := memory.ChatKey{Tenant: "t", ChatID: "restart"}
	const size = 5
	batch := func(name string) memory.AppendRequest {
		msgs := make([]memory.Message, size)
		for j := range msgs {
			msgs[j] = memory.Message{ID: fmt.Sprintf("%s/%d", name, j), Role: memory.RoleUser, Content: "turn " + name}
		}
		return memory.AppendRequest{Chat: k, Messages: msgs}
	}

	var (
		mu       sync.Mutex
		acked    = map[string]bool{}
		failures int
		wrong    []error
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", w, i)
				actx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := s.Append(actx, batch(name))
				cancel()
				mu.Lock()
				switch {
				case err == nil:
					acked[name] = true
				case errors.Is(err, memory.ErrUnavailable):
					failures++
				default:
					wrong = append(wrong, err)
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			mu.Lock()
			ok := cond()
			mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				close(stop)
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("appends before the stop", func() bool { return len(acked) >= 20 })
	if err := c.Stop(); err != nil {
		close(stop)
		t.Fatal(err)
	}
	waitFor("failed appends while stopped", func() bool { return failures >= 10 })
	close(stop)
	wg.Wait()
	if len(wrong) > 0 {
		t.Errorf("%d errors do not wrap ErrUnavailable, e.g. %v", len(wrong), wrong[0])
	}
	if err := s.Ping(ctx); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("Ping while the server is down: %v, want ErrUnavailable", err)
	}
	if _, err := s.Chat(ctx, k); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("Chat while the server is down: %v, want ErrUnavailable", err)
	}

	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// The same Store recovers: the pool drops dead connections and dials
	// again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.Append(ctx, batch("after"))
		if err == nil {
			acked["after"] = true
			break
		}
		if !errors.Is(err, memory.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("append after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	msgs, err := s.Messages(ctx, k, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	perBatch := map[string]int{}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d: not gap-free", i, m.Seq)
		}
		name, _, _ := strings.Cut(m.ID, "/")
		perBatch[name]++
	}
	for name, n := range perBatch {
		if n != size {
			t.Errorf("batch %s is half-written: %d of %d turns", name, n, size)
		}
	}
	for name := range acked {
		if perBatch[name] != size {
			t.Errorf("acknowledged batch %s is missing", name)
		}
	}
	t.Logf("%d batches acknowledged, %d unavailable errors, %d batches stored", len(acked), failures, len(perBatch))
}
