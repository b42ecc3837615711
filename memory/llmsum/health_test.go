package llmsum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory/llmsum/llmtest"
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
