package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// ChurnOptions configure a steady stream of appends (`contextd bench
// churn`): one turn per request, to a random chat of ChatPrefix0 ..
// ChatPrefix(Chats-1), at Rate turns/s in total, so the background workers
// (indexer, summariser, episodes, profiles) stay busy while another tool
// measures the read path.
type ChurnOptions struct {
	Rate       float64       // turns/s in total (default 200)
	Chats      int           // chats appended to (default 200)
	ChatPrefix string        // chat ids are ChatPrefix + index (default "chat-")
	Users      int           // chat i belongs to user "user-<i mod Users>" (default 20, as seed.py)
	Clients    int           // concurrent senders (default 8)
	Duration   time.Duration // stop after this long (0: until ctx ends)
	Seed       int64
}

// ChurnReport is what a churn run did: its appends were requests too, so
// their latency and errors are part of the picture.
type ChurnReport struct {
	Sent, Errors int64
	FirstError   string
	Elapsed      time.Duration
	Latency      *Histogram
	// Behind counts sends that started more than a second after their
	// slot: the server (or this process) could not keep up with Rate.
	Behind int64
}

func (o *ChurnOptions) check() error {
	if o.Rate == 0 {
		o.Rate = 200
	}
	if o.Chats == 0 {
		o.Chats = 200
	}
	if o.ChatPrefix == "" {
		o.ChatPrefix = "chat-"
	}
	if o.Users == 0 {
		o.Users = 20
	}
	if o.Clients == 0 {
		o.Clients = 8
	}
	switch {
	case o.Rate < 0 || o.Rate > 100_000:
		return fmt.Errorf("rate must be in 0..100000 turns/s, not %g", o.Rate)
	case o.Chats < 1 || o.Chats > 1_000_000:
		return fmt.Errorf("chats must be in 1..1000000, not %d", o.Chats)
	case o.Users < 1:
		return fmt.Errorf("users must be positive, not %d", o.Users)
	case o.Clients < 1 || o.Clients > 1024:
		return fmt.Errorf("clients must be in 1..1024, not %d", o.Clients)
	case o.Duration < 0 || o.Duration > 24*time.Hour:
		return fmt.Errorf("duration must be in 0..24h, not %s", o.Duration)
	}
	return nil
}

// Churn appends at o.Rate turns/s (open loop: a slow server makes the
// senders fall behind, counted in Behind, never slows the schedule) until
// o.Duration passes or ctx ends, then reports.
func Churn(ctx context.Context, base string, o ChurnOptions) (*ChurnReport, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	base, err := BaseURL(base)
	if err != nil {
		return nil, err
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	client := newClient(o.Clients)
	defer client.CloseIdleConnections()
	corpus := Corpus{Seed: o.Seed}
	var (
		sent, errs, behind atomic.Int64
		firstErr           firstError
		mu                 sync.Mutex
		hist               = NewHistogram()
	)
	slots := make(chan time.Time, o.Clients)
	var wg sync.WaitGroup
	for c := range o.Clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(o.Seed), uint64(c)+1))
			h := NewHistogram()
			for due := range slots {
				if time.Since(due) > time.Second {
					behind.Add(1)
				}
				i := r.IntN(o.Chats)
				body, _ := json.Marshal(appendBody{UserID: fmt.Sprintf("user-%d", i%o.Users),
					Messages: []inMessage{{Role: corpus.Role(r.IntN(2)), Content: corpus.Turn(i, 1_000_000+r.IntN(1_000_000))}}})
				status, err := post(ctx, client, base+"/v1/chats/"+url.PathEscape(fmt.Sprintf("%s%d", o.ChatPrefix, i))+"/messages", body, nil)
				if err != nil && ctx.Err() != nil {
					break // cut short by the end of the run: not an error
				}
				h.Record(time.Since(due))
				sent.Add(1)
				if err != nil || status/100 != 2 {
					errs.Add(1)
					firstErr.set(describe(status, err))
				}
			}
			mu.Lock()
			hist.Merge(h)
			mu.Unlock()
		})
	}
	start := time.Now()
	schedule(ctx, start, o.Rate, slots)
	close(slots)
	wg.Wait()
	return &ChurnReport{Sent: sent.Load(), Errors: errs.Load(), FirstError: firstErr.get(),
		Elapsed: time.Since(start), Latency: hist, Behind: behind.Load()}, nil
}

// schedule sends the due time of the n-th request, start + n/rate, until
// ctx ends; it waits for a free sender, so a stalled server delays sends
// (their latency counts from the due time).
func schedule(ctx context.Context, start time.Time, rate float64, slots chan<- time.Time) {
	interval := time.Duration(float64(time.Second) / rate)
	for n := int64(0); ; n++ {
		due := start.Add(time.Duration(n) * interval)
		if d := time.Until(due); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
		select {
		case <-ctx.Done():
			return
		case slots <- due:
		}
	}
}

// Write prints the report in one line.
func (r *ChurnReport) Write(w io.Writer) {
	rate := 0.0
	if r.Elapsed > 0 {
		rate = float64(r.Sent) / r.Elapsed.Seconds()
	}
	fmt.Fprintf(w, "churn: %d appends in %s (%.0f/s), %d errors, %d behind schedule; latency p50 %s p99 %s max %s\n",
		r.Sent, r.Elapsed.Round(time.Millisecond), rate, r.Errors, r.Behind,
		ms(r.Latency.Quantile(0.5)), ms(r.Latency.Quantile(0.99)), ms(r.Latency.Max()))
	if r.FirstError != "" {
		fmt.Fprintf(w, "churn: first error: %s\n", r.FirstError)
	}
}
