package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// BenchmarkContextWithProfile: what reading and showing the user's profile
// adds to a /v1/context call (compare the two sub-benchmarks' ns/op; target
// ≤ 50 µs).
func BenchmarkContextWithProfile(b *testing.B) {
	for _, withProfile := range []bool{false, true} {
		b.Run(fmt.Sprintf("profile=%v", withProfile), func(b *testing.B) {
			ctx := context.Background()
			s := newTestService(b)
			var msgs []InMessage
			for i := range 200 {
				msgs = append(msgs, InMessage{Role: []string{"user", "assistant"}[i%2], Content: fmt.Sprintf("turn %d about the Lisbon trip and hotels", i)})
			}
			if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "alice", Messages: msgs}); err != nil {
				b.Fatal(err)
			}
			fs := &fakeSummaries{store: s.store.(memory.Core), upTo: 190}
			if _, _, err := fs.Extend(ctx, memory.ChatKey{Tenant: "default", ChatID: "c1"}, true); err != nil {
				b.Fatal(err)
			}
			if withProfile {
				ps := s.store.(Profiles)
				var st memory.ProfileState
				for i := range 40 {
					st = memory.MergeChat(st, "alice", fmt.Sprintf("other-%d", i), memory.Summary{CoveredToSeq: 9,
						UserPreferences: []string{fmt.Sprintf("prefers option %d", i)}, Topics: []string{fmt.Sprintf("topic %d", i%7)},
						Entities: []memory.Entity{{Name: fmt.Sprintf("Place %d", i), Type: "place"}}}, time.Unix(int64(i), 0))
				}
				if err := ps.SaveProfile(ctx, "default", "alice", st, 0); err != nil {
					b.Fatal(err)
				}
				s.roles.profiles = ps
			}
			for b.Loop() {
				res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Strategy: string(StrategyRunningSummary)})
				if err != nil || (withProfile && res.Usage.ProfileTokens == 0) {
					b.Fatalf("%v %+v", err, res.Usage)
				}
			}
		})
	}
}

// The profile is shown for a chat with a user, reported fallbacks reach the
// answer, and a chat without a user gets neither.
func TestProfileInContextAndItsFallbacks(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	ps := s.store.(Profiles)
	s.roles.profiles = ps
	s.jobs.profileDegraded = func(tenant, user string) []string {
		if tenant == "default" && user == "alice" {
			return []string{"profile_merge_invalid"}
		}
		return nil
	}
	st := memory.MergeChat(memory.ProfileState{}, "alice", "elsewhere", memory.Summary{CoveredToSeq: 3, UserPreferences: []string{"prefers trains"}}, time.Unix(1, 0))
	if err := ps.SaveProfile(ctx, "default", "alice", st, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ chat, user string }{{"a", "alice"}, {"n", ""}} {
		if _, err := s.Append(ctx, "default", c.chat, AppendInput{UserID: c.user, Messages: []InMessage{{Role: "user", Content: "hello"}}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "a", Strategy: string(StrategyRunningSummary)})
	if err != nil || res.Sections.Profile == nil || !strings.Contains(res.Context, "prefers trains") || !contains(res.Degraded, "profile_merge_invalid") {
		t.Fatalf("alice's chat: %v %+v", err, res)
	}
	res, err = s.Context(ctx, "default", ContextInput{ChatID: "n", Strategy: string(StrategyRunningSummary)})
	if err != nil || res.Sections.Profile != nil || strings.Contains(res.Context, "trains") || len(res.Degraded) != 0 {
		t.Fatalf("a chat without a user: %v %+v", err, res)
	}
}
