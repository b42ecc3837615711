package llmsum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/truncation"
)

// The Condenser does not call a model that failed within DownFor, whoever
// called it: it fails at once with truncation.ErrUnavailable. A success
// clears the failure; a canceled call is not one.
func TestCondenserLeavesAFailedModelAlone(t *testing.T) {
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Reply{Status: 500}, llmtest.Reply{Content: "Short."}, llmtest.Reply{Content: "Short."}))
	h := NewHealth(srv.Model(t, "m"))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return at }
	c := NewCondenser(h, time.Second, "", h)
	text := strings.Repeat("A long message about many things. ", 10)
	ctx := context.Background()

	if _, err := c.Condense(ctx, text, 40); err == nil || errors.Is(err, truncation.ErrUnavailable) {
		t.Fatalf("first call: %v, want the model's own failure", err)
	}
	if down, cause := h.Down(); !down || cause == nil {
		t.Fatalf("Down() = %v, %v after a 500", down, cause)
	}
	for range 3 { // a context call condensing three messages
		if _, err := c.Condense(ctx, text, 40); !errors.Is(err, truncation.ErrUnavailable) {
			t.Fatalf("within DownFor: %v, want ErrUnavailable", err)
		}
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d calls reached the model, want 1", n)
	}
	at = at.Add(DownFor)
	if got, err := c.Condense(ctx, text, 40); err != nil || got != "Short." {
		t.Fatalf("after DownFor: %q %v, want the model called again", got, err)
	}
	if down, _ := h.Down(); down {
		t.Fatal("a success must clear the failure")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, _ = h.GenerateContent(canceled, nil)
	if down, _ := h.Down(); down {
		t.Fatal("a call its caller canceled says nothing about the model")
	}
}

// budget is a TokenBudget of limit tokens per tenant.
type budget struct {
	limit int
	spent map[string]int
}

func (b *budget) Exhausted(tenant string) bool { return b.spent[tenant] >= b.limit }
func (b *budget) Spend(tenant string, in, out int) {
	if b.spent == nil {
		b.spent = map[string]int{}
	}
	b.spent[tenant] += in + out
}

// The Condenser spends from the daily budget of the request's tenant, and
// once the tenant has spent it, fails at once (the caller falls back).
func TestCondenserSpendsTheTenantsBudget(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: "Short.", PromptTokens: 120, CompletionTokens: 10}))
	c := NewCondenser(srv.Model(t, "m"), time.Second, "", nil)
	b := &budget{limit: 200}
	c.Budget = b
	text := strings.Repeat("A long message about many things. ", 10)
	acme := memory.NewContextWithTenant(context.Background(), "acme")
	for i, want := range []bool{true, true, false} {
		_, err := c.Condense(acme, text, 40)
		if (err == nil) != want {
			t.Fatalf("call %d: %v (spent %d of %d)", i, err, b.spent["acme"], b.limit)
		}
		if !want && !errors.Is(err, truncation.ErrUnavailable) {
			t.Errorf("over budget: %v, want ErrUnavailable", err)
		}
	}
	if b.spent["acme"] != 260 || len(srv.Requests()) != 2 {
		t.Errorf("spent %v over %d calls, want 260 over 2", b.spent, len(srv.Requests()))
	}
	if _, err := c.Condense(memory.NewContextWithTenant(context.Background(), "other"), text, 40); err != nil {
		t.Errorf("another tenant's budget is its own: %v", err)
	}
}
