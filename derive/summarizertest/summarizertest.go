// Package summarizertest is the conformance suite every memory.Summarizer
// passes: the coverage contract the worker relies on when it writes a
// summary record (CoveredFromSeq/CoveredToSeq, Model, PromptVersion), that
// an extension reads only the previous summary and the new turns, and that
// summaries come back normalised. A summarizer's test calls Run.
package summarizertest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// Options describe the summarizer under test.
type Options struct {
	// New returns a fresh summarizer for the test.
	New func(t *testing.T) memory.Summarizer
	// Seen, when set, returns every text the summarizer sent to its model
	// since the last call (an LLM's prompts). The suite then checks that an
	// extension never sends turns the previous summary already covers. nil
	// for a summarizer without a model: it is handed no history to re-read.
	Seen func() []string
}

// Run runs the suite.
func Run(t *testing.T, o Options) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, o Options)
	}{
		{"FirstSummaryCoverage", testFirstSummary},
		{"ExtensionCoverage", testExtension},
		{"NeverRereadsHistory", testNeverRereads},
		{"NothingNew", testNothingNew},
		{"Normalized", testNormalized},
		{"Episode", testEpisode},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, o) })
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var chat = memory.Chat{Tenant: memory.DefaultTenant, ID: "c1", UserID: "u1", Agent: memory.DefaultAgent}

// turns makes the turns from..to, each naming its seq with marker, so a
// test can tell which turns a prompt held.
func turns(marker string, from, to int64) []memory.Message {
	var out []memory.Message
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for seq := from; seq <= to; seq++ {
		role := memory.RoleUser
		if seq%2 == 0 {
			role = memory.RoleAssistant
		}
		out = append(out, memory.Message{Seq: seq, ID: fmt.Sprintf("m%d", seq), Role: role, CreatedAt: base.Add(time.Duration(seq) * time.Minute),
			Content: fmt.Sprintf("%s%d: we decided to book the hotel in Lisbon for Maria, turn %d.", marker, seq, seq)})
	}
	return out
}

func summarize(t *testing.T, s memory.Summarizer, req memory.SummarizeRequest) memory.SummarizeResult {
	t.Helper()
	res, err := s.Summarize(ctxT(t), req)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	return res
}

// checkStamp checks what the summarizer must set on every summary.
func checkStamp(t *testing.T, s memory.Summarizer, req memory.SummarizeRequest, got memory.Summary, from, to int64) {
	t.Helper()
	if got.CoveredFromSeq != from || got.CoveredToSeq != to {
		t.Errorf("covers %d..%d, want %d..%d", got.CoveredFromSeq, got.CoveredToSeq, from, to)
	}
	if got.Model != s.Name() {
		t.Errorf("Model %q, want the summarizer's Name %q", got.Model, s.Name())
	}
	if want := s.PromptVersion(req.Prompts); got.PromptVersion != want || want == "" {
		t.Errorf("PromptVersion %q, want PromptVersion(prompts) %q (non-empty)", got.PromptVersion, want)
	}
}

func testFirstSummary(t *testing.T, o Options) {
	s := o.New(t)
	req := memory.SummarizeRequest{Chat: chat, Turns: turns("zqold", 3, 8), Structured: true}
	res := summarize(t, s, req)
	checkStamp(t, s, req, res.Summary, 3, 8)
	if res.Summary.IsEmpty() {
		t.Error("a summary of six turns holds nothing")
	}
}

func testExtension(t *testing.T, o Options) {
	s := o.New(t)
	first := summarize(t, s, memory.SummarizeRequest{Chat: chat, Turns: turns("zqold", 1, 6), Structured: true})
	prev := first.Summary.Clone()
	before := prev.Clone()
	req := memory.SummarizeRequest{Chat: chat, Prev: &prev, Turns: turns("zqnew", 7, 9), Structured: true}
	res := summarize(t, s, req)
	checkStamp(t, s, req, res.Summary, 1, 9)
	if !reflect.DeepEqual(prev.Clone(), before) {
		t.Error("Summarize changed the caller's Prev")
	}
}

func testNeverRereads(t *testing.T, o Options) {
	s := o.New(t)
	first := summarize(t, s, memory.SummarizeRequest{Chat: chat, Turns: turns("zqold", 1, 6), Structured: true})
	if o.Seen == nil {
		// No model: the summarizer holds no store and is handed only Prev
		// and the new turns; its result must still follow from them alone.
		a := summarize(t, s, memory.SummarizeRequest{Chat: chat, Prev: &first.Summary, Turns: turns("zqnew", 7, 9), Structured: true})
		b := summarize(t, o.New(t), memory.SummarizeRequest{Chat: chat, Prev: &first.Summary, Turns: turns("zqnew", 7, 9), Structured: true})
		a.Summary.UpdatedAt, b.Summary.UpdatedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(a.Summary, b.Summary) {
			t.Error("an extension depends on more than Prev and the new turns")
		}
		return
	}
	o.Seen() // forget the first call's prompts
	prev := first.Summary.Clone()
	summarize(t, s, memory.SummarizeRequest{Chat: chat, Prev: &prev, Turns: turns("zqnew", 7, 9), Structured: true})
	sent := strings.Join(o.Seen(), "\n")
	if !strings.Contains(sent, "zqnew7:") || !strings.Contains(sent, "zqnew9:") {
		t.Error("the extension did not send the new turns")
	}
	if strings.Contains(sent, "zqold") {
		t.Errorf("the extension re-sent turns the previous summary covers:\n%s", sent)
	}
}

func testNothingNew(t *testing.T, o Options) {
	s := o.New(t)
	first := summarize(t, s, memory.SummarizeRequest{Chat: chat, Turns: turns("zqold", 1, 4), Structured: true})
	prev := first.Summary.Clone()
	res := summarize(t, s, memory.SummarizeRequest{Chat: chat, Prev: &prev})
	if res.Summary.CoveredFromSeq != 1 || res.Summary.CoveredToSeq != 4 {
		t.Errorf("no new turns moved coverage to %d..%d, want 1..4", res.Summary.CoveredFromSeq, res.Summary.CoveredToSeq)
	}
}

func testNormalized(t *testing.T, o Options) {
	s := o.New(t)
	for _, structured := range []bool{true, false} {
		res := summarize(t, s, memory.SummarizeRequest{Chat: chat, Turns: turns("zqold", 1, 2), Structured: structured})
		n := res.Summary
		n.Normalize()
		if !reflect.DeepEqual(n, res.Summary) {
			t.Errorf("structured=%v: summary not normalised (nil lists): %+v", structured, res.Summary)
		}
	}
}

func testEpisode(t *testing.T, o Options) {
	s := o.New(t)
	res, err := s.SummarizeEpisode(ctxT(t), memory.EpisodeRequest{Chat: chat, Context: turns("ctx", 1, 2), Turns: turns("ep", 3, 8)})
	if err != nil {
		t.Fatalf("SummarizeEpisode: %v", err)
	}
	if res.Model == "" || res.PromptVersion == "" {
		t.Errorf("episode Model %q PromptVersion %q: both must be set", res.Model, res.PromptVersion)
	}
	if res.Short == "" {
		t.Error("episode has no short summary")
	}
}
