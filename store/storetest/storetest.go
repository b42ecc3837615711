// Package storetest is the conformance suite every memory.Backend passes (the
// Go CDK "drivertest" pattern): a backend's test calls Run with a function
// that opens a fresh, empty store, and its benchmarks call BenchmarkAppend.
//
// Beyond memory.Backend's comments, the suite pins down these shared choices:
//   - Chat-scoped methods (Chat, Messages, MessagesBySeq, SummaryHead,
//     SummaryChain, WriteSummary, UnindexedMessages, memory.TryLease, DeleteChat)
//     return an error wrapping memory.ErrNotFound for an unknown chat;
//     ReleaseLeases of an unknown chat is a no-op, and Done of an index
//     kind (memory.Backlogs) returns it in gone.
//   - Times are kept to the microsecond and returned in UTC.
//   - A batch repeating an id with the same role, name and content counts
//     the repeat as a duplicate; with different ones it fails with
//     memory.ErrConflict and stores nothing.
//   - WriteSummary rejects a CoveredToSeq outside expectCursor..last_seq with
//     memory.ErrConflict (the cursor only moves forward: memory.SummaryWrite.Check).
//   - limit <= 0 means no limit; list results are never nil.
package storetest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// Run runs the conformance suite. open must return a fresh, empty store for
// the given test; Run closes it when the test ends (Close must therefore be
// safe to call twice, should open register a Close of its own).
func Run(t *testing.T, open func(t *testing.T) memory.Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s memory.Backend)
	}{
		{"AppendAndRead", testAppendAndRead},
		{"IDsAndTimes", testIDsAndTimes},
		{"Metadata", testMetadata},
		{"Unicode", testUnicode},
		{"IdempotentRetry", testIdempotentRetry},
		{"DuplicatesWithinBatch", testDuplicatesWithinBatch},
		{"ConflictWithinBatch", testConflictWithinBatch},
		{"InvalidInput", testInvalidInput},
		{"ConcurrentAppends", testConcurrentAppends},
		{"TenantIsolation", testTenantIsolation},
		{"NotFound", testNotFound},
		{"SummaryChain", testSummaryChain},
		{"SummaryCursorRace", testSummaryCursorRace},
		{"Backlogs", testBacklogs},
		{"BacklogKinds", testBacklogKinds},
		{"MarkIndexedRaces", testMarkIndexedRaces},
		{"SummaryWorkOrder", testSummaryWorkOrder},
		{"Leases", testLeases},
		{"LeasesInOneWrite", testLeasesInOneWrite},
		{"AppendKeepsTheChatsUser", testAppendKeepsTheChatsUser},
		{"LeaseExpiry", testLeaseExpiry},
		{"LeaseContention", testLeaseContention},
		{"DeleteChat", testDeleteChat},
		{"ChatsOfUser", testChatsOfUser},
		{"Ping", testPing},
		{"Episodes", testEpisodes},
		{"EpisodesWholeOrNothing", testEpisodesWholeOrNothing},
		{"EpisodeBacklog", testEpisodeBacklog},
		{"EpisodesErased", testEpisodesErased},
		{"Profiles", testProfiles},
		{"ProfileWork", testProfileWork},
		{"ChatList", testChatList},
		{"Facts", testFacts},
		{"FactPaging", testFactPaging},
		{"FactBacklog", testFactBacklog},
		{"FactsErased", testFactsErased},
		{"AddFacts", testAddFacts},
		{"ArrivalBacklog", testArrivalBacklog},
		{"ChatLag", testChatLag},
		{"DeleteMessage", testDeleteMessage},
		{"RebuildEpisode", testRebuildEpisode},
		{"ReplaceSummary", testReplaceSummary},
		{"ReplaceSummaryCoveringNothing", testReplaceSummaryCoveringNothing},
		{"CleanSummary", testCleanSummary},
		{"RebuildSummary", testRebuildSummary},
		{"DirtyMarksNeverRepeat", testDirtyMarksNeverRepeat},
		{"SummaryHeadWhileReplaced", testSummaryHeadWhileReplaced},
		{"LateWorkOnDeletedTurn", testLateWorkOnDeletedTurn},
		{"DumpScopes", testDumpScopes},
		{"LoadConflicts", testLoadConflicts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
	// Tests from one fresh store into another.
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, a, b memory.Backend)
	}{
		{"DumpRoundTrip", testDumpRoundTrip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := open(t), open(t)
			t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
			tc.fn(t, a, b)
		})
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func key(tenant, chat string) memory.ChatKey { return memory.ChatKey{Tenant: tenant, ChatID: chat} }

func msg(id string, role memory.Role, content string) memory.Message {
	return memory.Message{ID: id, Role: role, Content: content}
}

// turns makes n messages with ids prefix-1..prefix-n.
func turns(prefix string, n int) []memory.Message {
	out := make([]memory.Message, n)
	for i := range out {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		out[i] = msg(fmt.Sprintf("%s-%d", prefix, i+1), role, fmt.Sprintf("turn %d of %s", i+1, prefix))
	}
	return out
}

// mustMark marks seqs of chat k indexed, which must exist.
func mustMark(t testing.TB, s memory.Backend, k memory.ChatKey, seqs ...int64) {
	t.Helper()
	gone, err := s.Done(ctxT(t), memory.IndexTurns, []memory.Mark{{Chat: k, Seqs: seqs}})
	if err != nil || len(gone) != 0 {
		t.Fatalf("MarkIndexed(%v, %v) = gone %v, %v", k, seqs, gone, err)
	}
}

func mustAppend(t testing.TB, s memory.Backend, req memory.AppendRequest) memory.AppendResult {
	t.Helper()
	res, err := s.Append(ctxT(t), req)
	if err != nil {
		t.Fatalf("Append(%v): %v", req.Chat, err)
	}
	return res
}

func mustMessages(t testing.TB, s memory.Backend, k memory.ChatKey) []memory.Message {
	t.Helper()
	msgs, err := s.Messages(ctxT(t), k, 0, 0)
	if err != nil {
		t.Fatalf("Messages(%v): %v", k, err)
	}
	return msgs
}

func mustChat(t testing.TB, s memory.Backend, k memory.ChatKey) memory.Chat {
	t.Helper()
	c, err := s.Chat(ctxT(t), k)
	if err != nil {
		t.Fatalf("Chat(%v): %v", k, err)
	}
	return c
}

func seqsOf(msgs []memory.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Seq
	}
	return out
}

func span(from, to int64) []int64 {
	out := []int64{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// sameMessage compares a stored message with what was sent (times to the
// microsecond, in UTC).
func sameMessage(t testing.TB, got, want memory.Message) {
	t.Helper()
	if got.ID != want.ID || got.Seq != want.Seq || got.Role != want.Role || got.Name != want.Name || got.Content != want.Content {
		t.Errorf("message = %+v, want %+v", got, want)
	}
	if !want.CreatedAt.IsZero() && !got.CreatedAt.Equal(want.CreatedAt.Truncate(time.Microsecond)) {
		t.Errorf("message %s created_at = %v, want %v", want.ID, got.CreatedAt, want.CreatedAt.Truncate(time.Microsecond))
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("message %s created_at location = %v, want UTC", want.ID, got.CreatedAt.Location())
	}
	if !reflect.DeepEqual(got.Metadata, want.Metadata) {
		t.Errorf("message %s metadata = %#v, want %#v", want.ID, got.Metadata, want.Metadata)
	}
}

func testAppendAndRead(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "chat-1")
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	in := []memory.Message{
		{ID: "m1", Role: memory.RoleSystem, Content: "be brief", CreatedAt: at},
		{ID: "m2", Role: memory.RoleUser, Name: "ann", Content: "hello", CreatedAt: at.Add(time.Second)},
		{ID: "m3", Role: memory.RoleAssistant, Content: "hi", CreatedAt: at.Add(2 * time.Second)},
		{ID: "m4", Role: memory.RoleTool, Name: "search", Content: "{\"ok\":true}", CreatedAt: at.Add(3 * time.Second)},
	}
	res := mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "u1", Agent: "planner", Messages: in})
	if !res.Created || res.Appended != 4 || res.Duplicates != 0 || res.LastSeq != 4 {
		t.Fatalf("first append = %+v, want created, 4 appended, last_seq 4", res)
	}
	wantRefs := []memory.MessageRef{ref("m1", 1), ref("m2", 2), ref("m3", 3), ref("m4", 4)}
	if !reflect.DeepEqual(res.Messages, wantRefs) {
		t.Errorf("refs = %v, want %v", res.Messages, wantRefs)
	}
	if res.Chat.Tenant != "t1" || res.Chat.ID != "chat-1" || res.Chat.UserID != "u1" || res.Chat.Agent != "planner" || res.Chat.LastSeq != 4 {
		t.Errorf("result chat = %+v", res.Chat)
	}

	// Later appends change neither the user nor the agent (another user
	// is refused: AppendKeepsTheChatsUser).
	res2 := mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "u1", Agent: "other",
		Messages: []memory.Message{msg("m5", memory.RoleUser, "again")}})
	if res2.Created || res2.Appended != 1 || res2.LastSeq != 5 || !reflect.DeepEqual(res2.Messages, []memory.MessageRef{ref("m5", 5)}) {
		t.Errorf("second append = %+v", res2)
	}
	c := mustChat(t, s, k)
	if c.UserID != "u1" || c.Agent != "planner" || c.LastSeq != 5 || c.SummaryCursor != 0 {
		t.Errorf("chat = %+v, want user u1, agent planner, last_seq 5, cursor 0", c)
	}
	if c.CreatedAt.IsZero() || c.UpdatedAt.Before(c.CreatedAt) {
		t.Errorf("chat times created %v updated %v", c.CreatedAt, c.UpdatedAt)
	}

	all := mustMessages(t, s, k)
	if len(all) != 5 {
		t.Fatalf("Messages = %d, want 5", len(all))
	}
	for i, want := range in {
		want.Seq = int64(i + 1)
		sameMessage(t, all[i], want)
	}

	page, err := s.Messages(ctx, k, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(page); !reflect.DeepEqual(got, []int64{3, 4}) {
		t.Errorf("Messages(after 2, limit 2) seqs = %v, want [3 4]", got)
	}
	tail, err := s.Messages(ctx, k, 5, 10)
	if err != nil || tail == nil || len(tail) != 0 {
		t.Errorf("Messages after the last = %v, %v; want empty, non-nil", tail, err)
	}

	bySeq, err := s.MessagesBySeq(ctx, k, []int64{4, 2, 99, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(bySeq); !reflect.DeepEqual(got, []int64{2, 4}) {
		t.Errorf("MessagesBySeq(4,2,99,0) seqs = %v, want [2 4]", got)
	}
	if len(bySeq) == 2 && (bySeq[0].ID != "m2" || bySeq[1].Name != "search") {
		t.Errorf("MessagesBySeq = %+v", bySeq)
	}

	// An append naming no agent gets the default one.
	res3 := mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "chat-2"), Messages: turns("x", 1)})
	if res3.Chat.Agent != memory.DefaultAgent || res3.Chat.UserID != "" {
		t.Errorf("chat without agent = %+v, want agent %q", res3.Chat, memory.DefaultAgent)
	}
}

func testIDsAndTimes(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "ids")
	before := time.Now().UTC().Truncate(time.Microsecond)
	res := mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: []memory.Message{
		{Role: memory.RoleUser, Content: "no id"},
		{Role: memory.RoleAssistant, Content: "no id either"},
		{ID: "given", Role: memory.RoleUser, Content: "nanos", CreatedAt: time.Date(2023, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))},
	}})
	after := time.Now().UTC()
	if res.Appended != 3 {
		t.Fatalf("appended %d, want 3", res.Appended)
	}
	id1, id2 := res.Messages[0].ID, res.Messages[1].ID
	if id1 == "" || id2 == "" || id1 == id2 {
		t.Errorf("assigned ids %q, %q: want distinct, non-empty", id1, id2)
	}
	msgs := mustMessages(t, s, k)
	if msgs[0].ID != id1 || msgs[1].ID != id2 {
		t.Errorf("stored ids %q %q, reported %q %q", msgs[0].ID, msgs[1].ID, id1, id2)
	}
	for _, m := range msgs[:2] {
		if m.CreatedAt.Before(before) || m.CreatedAt.After(after) {
			t.Errorf("default created_at %v not within [%v, %v]", m.CreatedAt, before, after)
		}
	}
	want := time.Date(2023, 1, 2, 2, 4, 5, 123456000, time.UTC)
	if !msgs[2].CreatedAt.Equal(want) || msgs[2].CreatedAt.Location() != time.UTC {
		t.Errorf("created_at = %v, want %v in UTC", msgs[2].CreatedAt, want)
	}
	// Retrying a message that had no id is not idempotent, by design: it
	// gets a fresh id.
	res2 := mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: []memory.Message{{Role: memory.RoleUser, Content: "no id"}}})
	if res2.Appended != 1 || res2.LastSeq != 4 {
		t.Errorf("append without id = %+v, want appended at seq 4", res2)
	}
	if _, err := s.Messages(ctx, k, 0, 0); err != nil {
		t.Fatal(err)
	}
}

func testMetadata(t *testing.T, s memory.Backend) {
	k := key("t1", "meta")
	in := []memory.Message{
		{ID: "nil", Role: memory.RoleUser, Content: "a"},
		{ID: "empty", Role: memory.RoleUser, Content: "b", Metadata: map[string]any{}},
		{ID: "nested", Role: memory.RoleUser, Content: "c", Metadata: map[string]any{
			"n": 1.5, "s": "zürich \"quoted\" \\ slash", "b": true, "null": nil,
			"list": []any{"x", 2.0, map[string]any{"deep": "yes"}},
			"obj":  map[string]any{"k": "v", "emoji": "🙂"},
			// Numbers as the API decodes them (json.Number): an id past
			// 2^53 must not come back rounded through float64.
			"big": json.Number("1234567890123456789"), "neg": json.Number("-9007199254740993"),
		}},
	}
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: in})
	msgs := mustMessages(t, s, k)
	if len(msgs) != 3 {
		t.Fatalf("got %d messages", len(msgs))
	}
	if msgs[0].Metadata != nil {
		t.Errorf("nil metadata came back as %#v", msgs[0].Metadata)
	}
	for i := 1; i < 3; i++ { // the same JSON (keys sorted), whatever Go types carry the numbers
		got, err1 := json.Marshal(msgs[i].Metadata)
		want, err2 := json.Marshal(in[i].Metadata)
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("metadata %s = %s, want %s (%v, %v)", in[i].ID, got, want, err1, err2)
		}
	}
}

func testUnicode(t *testing.T, s memory.Backend) {
	k := key("tenant-ü", "chat-日本語-🙂")
	contents := []string{
		"emoji 🙂👍🏽🇨🇭 and a family 👨‍👩‍👧",
		"日本語のテキスト、中文文本，한국어",
		"עברית וערבית: مرحبا",
		"combining: e\u0301 a\u0308, zero width:\u200b|, BOM:\ufeff",
		"quotes ' \" ` and backslash \\ and %_ wildcards",
		"line\nbreaks\r\nand\ttabs",
		strings.Repeat("long ✓ ", 20000),
	}
	in := make([]memory.Message, len(contents))
	for i, c := range contents {
		in[i] = memory.Message{ID: fmt.Sprintf("ü-%d-✓", i), Role: memory.RoleUser, Name: "名前", Content: c}
	}
	mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "ユーザー", Agent: "agent-ß", Messages: in})
	msgs := mustMessages(t, s, k)
	if len(msgs) != len(in) {
		t.Fatalf("got %d messages, want %d", len(msgs), len(in))
	}
	for i := range in {
		in[i].Seq = int64(i + 1)
		sameMessage(t, msgs[i], in[i])
	}
	c := mustChat(t, s, k)
	if c.UserID != "ユーザー" || c.Agent != "agent-ß" {
		t.Errorf("chat = %+v", c)
	}
	ids, err := memory.ChatsOfUser(ctxT(t), s, "tenant-ü", "ユーザー")
	if err != nil || !reflect.DeepEqual(ids, []string{"chat-日本語-🙂"}) {
		t.Errorf("ChatsOfUser = %v, %v", ids, err)
	}
}

func testIdempotentRetry(t *testing.T, s memory.Backend) {
	k := key("t1", "retry")
	batch := turns("r", 5)
	first := mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: batch})
	second := mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: batch})
	if second.Created || second.Appended != 0 || second.Duplicates != 5 || second.LastSeq != 5 {
		t.Errorf("retry = %+v, want 0 appended, 5 duplicates, last_seq 5", second)
	}
	if !reflect.DeepEqual(first.Messages, second.Messages) {
		t.Errorf("retry refs %v, first refs %v", second.Messages, first.Messages)
	}
	// A retry of a partly new batch stores only the new part.
	third := mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: append(turns("r", 6)[3:], msg("new", memory.RoleUser, "n"))})
	want := []memory.MessageRef{ref("r-4", 4), ref("r-5", 5), ref("r-6", 6), ref("new", 7)}
	if third.Appended != 2 || third.Duplicates != 2 || third.LastSeq != 7 || !reflect.DeepEqual(third.Messages, want) {
		t.Errorf("partial retry = %+v, want refs %v", third, want)
	}
	if got := seqsOf(mustMessages(t, s, k)); !reflect.DeepEqual(got, span(1, 7)) {
		t.Errorf("seqs = %v", got)
	}
}

func testDuplicatesWithinBatch(t *testing.T, s memory.Backend) {
	k := key("t1", "dups")
	a, b := msg("a", memory.RoleUser, "A"), msg("b", memory.RoleAssistant, "B")
	res := mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: []memory.Message{a, b, a, a}})
	want := []memory.MessageRef{ref("a", 1), ref("b", 2), ref("a", 1), ref("a", 1)}
	if res.Appended != 2 || res.Duplicates != 2 || res.LastSeq != 2 || !reflect.DeepEqual(res.Messages, want) {
		t.Errorf("append = %+v, want 2 appended, 2 duplicates, refs %v", res, want)
	}
	c := msg("c", memory.RoleUser, "C")
	res = mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: []memory.Message{b, c, c}})
	want = []memory.MessageRef{ref("b", 2), ref("c", 3), ref("c", 3)}
	if res.Appended != 1 || res.Duplicates != 2 || res.LastSeq != 3 || !reflect.DeepEqual(res.Messages, want) {
		t.Errorf("append = %+v, want refs %v", res, want)
	}
	msgs := mustMessages(t, s, k)
	if len(msgs) != 3 || msgs[0].ID != "a" || msgs[1].ID != "b" || msgs[2].ID != "c" {
		t.Errorf("stored = %+v", msgs)
	}
}

func testConflictWithinBatch(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "conflict")
	_, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: []memory.Message{
		msg("a", memory.RoleUser, "one"), msg("b", memory.RoleUser, "x"), msg("a", memory.RoleUser, "two"),
	}})
	if !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("same id, different content in one batch: err = %v, want ErrConflict", err)
	}
	if _, err := s.Chat(ctx, k); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("rejected batch created the chat: err = %v", err)
	}
}

func testInvalidInput(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "invalid")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("ok", 1)})
	bad := []struct {
		name string
		req  memory.AppendRequest
	}{
		{"role", memory.AppendRequest{Chat: k, Messages: []memory.Message{msg("r", "robot", "x")}}},
		{"nul content", memory.AppendRequest{Chat: k, Messages: []memory.Message{msg("n", memory.RoleUser, "a\x00b")}}},
		{"invalid utf8", memory.AppendRequest{Chat: k, Messages: []memory.Message{msg("u", memory.RoleUser, "a\xffb")}}},
		{"nul metadata", memory.AppendRequest{Chat: k, Messages: []memory.Message{{ID: "m", Role: memory.RoleUser, Metadata: map[string]any{"k": "a\x00"}}}}},
		{"empty chat id", memory.AppendRequest{Chat: key("t1", ""), Messages: turns("e", 1)}},
		{"empty tenant", memory.AppendRequest{Chat: key("", "c"), Messages: turns("e", 1)}},
	}
	for _, tc := range bad {
		if res, err := s.Append(ctx, tc.req); err == nil {
			t.Errorf("%s: Append = %+v, want an error", tc.name, res)
		}
	}
	// Nothing of the bad batches was stored, even next to a good message.
	if _, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: []memory.Message{
		msg("good", memory.RoleUser, "fine"), msg("bad", memory.RoleUser, "\x00")}}); err == nil {
		t.Error("batch with one bad message was accepted")
	}
	if msgs := mustMessages(t, s, k); len(msgs) != 1 {
		t.Errorf("stored %d messages, want only the first good one", len(msgs))
	}
}

func testConcurrentAppends(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "busy")
	const workers, batches, size = 8, 12, 5
	var wg sync.WaitGroup
	results := make([][]memory.AppendResult, workers)
	errs := make(chan error, workers*batches)
	start := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			for b := 0; b < batches; b++ {
				req := memory.AppendRequest{Chat: k, UserID: "u", Messages: turns(fmt.Sprintf("w%d-b%d", w, b), size)}
				res, err := s.Append(ctx, req)
				if err != nil {
					errs <- err
					return
				}
				results[w] = append(results[w], res)
				// Every third batch is retried at once, as a client would
				// after a timeout.
				if b%3 == 0 {
					if res, err := s.Append(ctx, req); err != nil {
						errs <- err
						return
					} else if res.Appended != 0 || res.Duplicates != size {
						errs <- fmt.Errorf("retry stored %d", res.Appended)
						return
					}
				}
			}
		}(w)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent append: %v", err)
	}
	created := 0
	for w := range results {
		for _, res := range results[w] {
			if res.Created {
				created++
			}
			// One transaction per batch: its seqs are contiguous.
			if res.Appended != size || res.Messages[size-1].Seq != res.LastSeq {
				t.Errorf("batch result %+v", res)
			}
			for i := 1; i < size; i++ {
				if res.Messages[i].Seq != res.Messages[i-1].Seq+1 {
					t.Errorf("batch seqs not contiguous: %v", res.Messages)
					break
				}
			}
		}
	}
	if created != 1 {
		t.Errorf("%d appends report creating the chat, want 1", created)
	}
	total := int64(workers * batches * size)
	msgs := mustMessages(t, s, k)
	if got := seqsOf(msgs); !reflect.DeepEqual(got, span(1, total)) {
		t.Fatalf("seqs are not exactly 1..%d (got %d messages)", total, len(got))
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		if ids[m.ID] {
			t.Errorf("id %s stored twice", m.ID)
		}
		ids[m.ID] = true
	}
	if c := mustChat(t, s, k); c.LastSeq != total {
		t.Errorf("last_seq = %d, want %d", c.LastSeq, total)
	}
}

func testTenantIsolation(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	a, b := key("tenant-a", "same"), key("tenant-b", "same")
	mustAppend(t, s, memory.AppendRequest{Chat: a, UserID: "u", Agent: "agent-a", Messages: []memory.Message{msg("m1", memory.RoleUser, "secret of a")}})
	res := mustAppend(t, s, memory.AppendRequest{Chat: b, UserID: "u", Agent: "agent-b", Messages: []memory.Message{msg("m1", memory.RoleUser, "b's own"), msg("m2", memory.RoleUser, "b2")}})
	if !res.Created || res.Appended != 2 || res.Duplicates != 0 {
		t.Errorf("same chat and message ids in another tenant: %+v, want a new chat with 2 new turns", res)
	}
	ma, mb := mustMessages(t, s, a), mustMessages(t, s, b)
	if len(ma) != 1 || ma[0].Content != "secret of a" || len(mb) != 2 || mb[0].Content != "b's own" {
		t.Errorf("tenant a %+v, tenant b %+v", ma, mb)
	}
	if c := mustChat(t, s, a); c.Agent != "agent-a" || c.LastSeq != 1 {
		t.Errorf("chat a = %+v", c)
	}
	// Other tenants are not visible at all.
	if _, err := s.Chat(ctx, key("tenant-c", "same")); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Chat in tenant-c: %v, want ErrNotFound", err)
	}
	// A summary and a lease in a are not b's.
	if _, err := memory.AppendSummary(ctx, s, a, 0, memory.SummaryRecord{Summary: memory.Summary{Narrative: "a only", CoveredFromSeq: 1, CoveredToSeq: 1}, FromSeq: 1, ToSeq: 1}); err != nil {
		t.Fatal(err)
	}
	if h, err := s.SummaryHead(ctx, b); err != nil || h != nil {
		t.Errorf("SummaryHead(b) = %v, %v; want none", h, err)
	}
	if ok, err := memory.TryLease(ctx, s, a, memory.LeaseSummary, "w1", time.Minute); err != nil || !ok {
		t.Fatalf("TryLease(a) = %v, %v", ok, err)
	}
	if ok, err := memory.TryLease(ctx, s, b, memory.LeaseSummary, "w2", time.Minute); err != nil || !ok {
		t.Errorf("TryLease(b) while a is leased = %v, %v; want true", ok, err)
	}
	ids, err := memory.ChatsOfUser(ctx, s, "tenant-a", "u")
	if err != nil || !reflect.DeepEqual(ids, []string{"same"}) {
		t.Errorf("ChatsOfUser(tenant-a) = %v, %v", ids, err)
	}
	// Deleting a leaves b alone.
	if err := s.DeleteChat(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Chat(ctx, a); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("deleted chat a: %v", err)
	}
	if got := mustMessages(t, s, b); len(got) != 2 {
		t.Errorf("tenant b lost messages: %d left", len(got))
	}
}

func testNotFound(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "exists"), Messages: turns("x", 2)})
	k := key("t1", "missing")
	checks := map[string]func() error{
		"Chat":              func() error { _, err := s.Chat(ctx, k); return err },
		"Messages":          func() error { _, err := s.Messages(ctx, k, 0, 10); return err },
		"MessagesBySeq":     func() error { _, err := s.MessagesBySeq(ctx, k, []int64{1}); return err },
		"SummaryHead":       func() error { _, err := s.SummaryHead(ctx, k); return err },
		"SummaryChain":      func() error { _, err := s.SummaryChain(ctx, k); return err },
		"AppendSummary":     func() error { _, err := memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{}); return err },
		"UnindexedMessages": func() error { _, err := s.UnindexedMessages(ctx, k, 10); return err },
		"TryLease":          func() error { _, err := memory.TryLease(ctx, s, k, memory.LeaseIndex, "w", time.Minute); return err },
		"DeleteChat":        func() error { return s.DeleteChat(ctx, k) },
		// The chat exists in t1 only.
		"Chat other tenant": func() error { _, err := s.Chat(ctx, key("t2", "exists")); return err },
	}
	for name, fn := range checks {
		if err := fn(); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("%s of an unknown chat: err = %v, want ErrNotFound", name, err)
		}
	}
	if err := memory.ReleaseLease(ctx, s, k, memory.LeaseIndex, "w"); err != nil {
		t.Errorf("ReleaseLease of an unknown chat: %v, want nil", err)
	}
	if ids, err := memory.ChatsOfUser(ctx, s, "t1", "nobody"); err != nil || ids == nil || len(ids) != 0 {
		t.Errorf("ChatsOfUser(nobody) = %#v, %v; want empty", ids, err)
	}
}

func sampleSummary(from, to int64, narrative string) memory.Summary {
	return memory.Summary{
		Topics:          []string{"billing", "refunds"},
		Entities:        []memory.Entity{{Name: "ACME", Type: "org", Details: "customer since 2019"}, {Name: "Zoë", Type: "person", Details: ""}},
		ActionsTaken:    []string{"opened ticket #42"},
		Decisions:       []string{"refund approved"},
		OpenQuestions:   []string{},
		UserPreferences: []string{"prefers email"},
		Narrative:       narrative,
		CoveredFromSeq:  from,
		CoveredToSeq:    to,
		Stale:           to%2 == 1,
		Model:           "test-model",
		PromptVersion:   "pv-1",
		UpdatedAt:       time.Date(2024, 6, 1, 10, 0, 0, 123456789, time.UTC),
	}
}

// sameRecord compares two records field by field (times with Equal).
func sameRecord(t testing.TB, got, want memory.SummaryRecord) {
	t.Helper()
	g, w := got, want
	if !g.Summary.UpdatedAt.Equal(w.Summary.UpdatedAt) || !g.CreatedAt.Equal(w.CreatedAt) {
		t.Errorf("record %s times: updated %v created %v, want %v %v", w.ID, g.Summary.UpdatedAt, g.CreatedAt, w.Summary.UpdatedAt, w.CreatedAt)
	}
	g.Summary.UpdatedAt, w.Summary.UpdatedAt, g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("record = %+v\nwant     %+v", g, w)
	}
}

func testSummaryChain(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "sum")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("s", 10)})
	if h, err := s.SummaryHead(ctx, k); err != nil || h != nil {
		t.Fatalf("SummaryHead before any = %v, %v; want nil, nil", h, err)
	}
	if ch, err := s.SummaryChain(ctx, k); err != nil || ch == nil || len(ch) != 0 {
		t.Fatalf("SummaryChain before any = %v, %v; want empty", ch, err)
	}

	before := time.Now().UTC().Truncate(time.Microsecond)
	in1 := memory.SummaryRecord{Summary: sampleSummary(1, 6, "first six turns ✓"), FromSeq: 1, ToSeq: 6, TokenCount: 42,
		ID: "ignored", Depth: 7} // the store sets ID, ParentID, Depth
	r1, err := memory.AppendSummary(ctx, s, k, 0, in1)
	if err != nil {
		t.Fatal(err)
	}
	if r1.ID == "" || r1.ID == "ignored" || r1.ParentID != nil || r1.Depth != 0 || r1.CreatedAt.Before(before) {
		t.Errorf("first record = %+v: want a new id, no parent, depth 0, created now", r1)
	}
	if r1.FromSeq != 1 || r1.ToSeq != 6 || r1.TokenCount != 42 || r1.Narrative != "first six turns ✓" {
		t.Errorf("first record lost fields: %+v", r1)
	}
	if c := mustChat(t, s, k); c.SummaryCursor != 6 || c.HeadID != r1.ID {
		t.Errorf("cursor = %d, head id %q; want 6, %q (the chat row carries its head's id)", c.SummaryCursor, c.HeadID, r1.ID)
	}
	h, err := s.SummaryHead(ctx, k)
	if err != nil || h == nil {
		t.Fatalf("SummaryHead = %v, %v", h, err)
	}
	sameRecord(t, *h, r1)

	summaryCursorRule(t, s, k)

	r2, err := memory.AppendSummary(ctx, s, k, 6, memory.SummaryRecord{Summary: sampleSummary(1, 10, "all ten"), FromSeq: 7, ToSeq: 10, TokenCount: 77})
	if err != nil {
		t.Fatal(err)
	}
	if r2.ParentID == nil || *r2.ParentID != r1.ID || r2.Depth != 1 || r2.ID == r1.ID {
		t.Errorf("second record = %+v, want parent %s, depth 1", r2, r1.ID)
	}
	if c := mustChat(t, s, k); c.HeadID != r2.ID {
		t.Errorf("head id after a second record = %q, want %q", c.HeadID, r2.ID)
	}
	// The summary may be rewritten without new turns (cursor stays).
	r3, err := memory.AppendSummary(ctx, s, k, 10, memory.SummaryRecord{Summary: sampleSummary(1, 10, "rewritten"), FromSeq: 11, ToSeq: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r3.Depth != 2 || r3.ParentID == nil || *r3.ParentID != r2.ID {
		t.Errorf("third record = %+v", r3)
	}
	chain, err := s.SummaryChain(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) != 3 {
		t.Fatalf("chain length %d, want 3", len(chain))
	}
	for i, want := range []memory.SummaryRecord{r3, r2, r1} {
		sameRecord(t, chain[i], want)
	}
	if c := mustChat(t, s, k); c.SummaryCursor != 10 {
		t.Errorf("cursor = %d, want 10", c.SummaryCursor)
	}
	updatedAtFilled(t, s, k)
}

// summaryCursorRule: on a chain at cursor 6 of 10 turns, the writes that
// break the cursor rule write nothing.
func summaryCursorRule(t *testing.T, s memory.Backend, k memory.ChatKey) {
	t.Helper()
	ctx := ctxT(t)
	// A writer that read cursor 0 lost the race: nothing is written.
	if _, err := memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{Summary: sampleSummary(1, 8, "stale"), FromSeq: 1, ToSeq: 8}); !errors.Is(err, memory.ErrCursorMoved) {
		t.Errorf("AppendSummary with an old cursor: %v, want ErrCursorMoved", err)
	}
	// The cursor never moves backwards nor past the last turn.
	if _, err := memory.AppendSummary(ctx, s, k, 6, memory.SummaryRecord{Summary: sampleSummary(1, 5, "back"), FromSeq: 6, ToSeq: 5}); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("AppendSummary moving the cursor back: %v, want ErrConflict", err)
	}
	if _, err := memory.AppendSummary(ctx, s, k, 6, memory.SummaryRecord{Summary: sampleSummary(1, 11, "future"), FromSeq: 7, ToSeq: 11}); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("AppendSummary past last_seq: %v, want ErrConflict", err)
	}
	if ch, _ := s.SummaryChain(ctx, k); len(ch) != 1 {
		t.Fatalf("chain has %d records after rejected writes, want 1", len(ch))
	}
}

// updatedAtFilled: a record at cursor 10 with a zero UpdatedAt gets one.
func updatedAtFilled(t *testing.T, s memory.Backend, k memory.ChatKey) {
	t.Helper()
	ctx := ctxT(t)
	// A zero UpdatedAt is filled in.
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("more", 1)})
	r4, err := memory.AppendSummary(ctx, s, k, 10, memory.SummaryRecord{Summary: memory.Summary{Narrative: "n", CoveredFromSeq: 1, CoveredToSeq: 11}, FromSeq: 11, ToSeq: 11})
	if err != nil {
		t.Fatal(err)
	}
	if r4.UpdatedAt.IsZero() {
		t.Error("zero UpdatedAt not set")
	}
	if h, _ := s.SummaryHead(ctx, k); h == nil || h.ID != r4.ID || !h.UpdatedAt.Equal(r4.UpdatedAt) {
		t.Errorf("head = %+v, want %s", h, r4.ID)
	}
}

func testSummaryCursorRace(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	const rounds, writers = 4, 4
	for r := 0; r < rounds; r++ {
		k := key("t1", fmt.Sprintf("race-%d", r))
		mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("x", 8)})
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, writers)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				<-start
				_, errs[w] = memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{
					Summary: sampleSummary(1, int64(4+w), fmt.Sprintf("writer %d", w)), FromSeq: 1, ToSeq: int64(4 + w)})
			}(w)
		}
		close(start)
		wg.Wait()
		won := -1
		for w, err := range errs {
			switch {
			case err == nil:
				if won >= 0 {
					t.Errorf("round %d: writers %d and %d both won", r, won, w)
				}
				won = w
			case !errors.Is(err, memory.ErrCursorMoved):
				t.Errorf("round %d writer %d: %v, want nil or ErrCursorMoved", r, w, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no writer won", r)
		}
		chain, err := s.SummaryChain(ctx, k)
		if err != nil || len(chain) != 1 || chain[0].Narrative != fmt.Sprintf("writer %d", won) {
			t.Errorf("round %d: chain = %+v, %v; want the winner's record only", r, chain, err)
		}
		if c := mustChat(t, s, k); c.SummaryCursor != int64(4+won) {
			t.Errorf("round %d: cursor %d, want %d", r, c.SummaryCursor, 4+won)
		}
	}
}

func chatIDs(chats []memory.Chat) []string {
	out := make([]string, len(chats))
	for i, c := range chats {
		out[i] = c.Tenant + "/" + c.ID
	}
	return out
}

func backlog(t testing.TB, s memory.Backend) memory.Backlog {
	t.Helper()
	b, err := s.BacklogSizes(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testBacklogs(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	if b := backlog(t, s); b != (memory.Backlog{}) {
		t.Fatalf("empty store backlog = %+v", b)
	}
	if l, err := pendingChats(ctx, s, memory.IndexTurns, 10); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("UnindexedChats on an empty store = %v, %v", l, err)
	}
	one, two := key("t1", "one"), key("t2", "two")
	mustAppend(t, s, memory.AppendRequest{Chat: one, Messages: turns("a", 5)})
	mustAppend(t, s, memory.AppendRequest{Chat: two, Messages: turns("b", 3)})
	if b := backlog(t, s); b != (memory.Backlog{Unindexed: 8, Unsummarised: 8, UndrawnTurns: 8}) {
		t.Errorf("backlog = %+v, want 8/8/8", b)
	}
	chats, err := pendingChats(ctx, s, memory.IndexTurns, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := chatIDs(chats); !reflect.DeepEqual(sorted(got), []string{"t1/one", "t2/two"}) {
		t.Errorf("UnindexedChats = %v", got)
	}
	if l, _ := pendingChats(ctx, s, memory.IndexTurns, 1); len(l) != 1 {
		t.Errorf("UnindexedChats(limit 1) = %d chats", len(l))
	}
	um, err := s.UnindexedMessages(ctx, one, 2)
	if err != nil || !reflect.DeepEqual(seqsOf(um), []int64{1, 2}) || um[0].Content != "turn 1 of a" {
		t.Errorf("UnindexedMessages(one, 2) = %v, %v", seqsOf(um), err)
	}
	// Marking is idempotent and ignores seqs that do not exist.
	for i := 0; i < 2; i++ {
		mustMark(t, s, one, 1, 2, 4, 99)
	}
	mustMark(t, s, one)
	if b := backlog(t, s); b.Unindexed != 5 {
		t.Errorf("unindexed = %d, want 5", b.Unindexed)
	}
	um, _ = s.UnindexedMessages(ctx, one, 0)
	if !reflect.DeepEqual(seqsOf(um), []int64{3, 5}) {
		t.Errorf("UnindexedMessages(one) = %v, want [3 5]", seqsOf(um))
	}
	// Several chats in one call; seqs of chat one under chat two's key
	// change nothing of one; chats that do not exist (another tenant's
	// name included) are skipped and returned, with or without seqs.
	missing, elsewhere := key("t1", "missing"), key("t2", "one")
	gone, err := s.Done(ctx, memory.IndexTurns, []memory.Mark{{Chat: missing, Seqs: []int64{1}}, {Chat: two, Seqs: []int64{3}},
		{Chat: elsewhere}, {Chat: one, Seqs: []int64{3, 5}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []memory.ChatKey{missing, elsewhere}; !reflect.DeepEqual(sortedKeys(gone), sortedKeys(want)) {
		t.Errorf("MarkIndexed gone = %v, want %v", gone, want)
	}
	if gone, err := s.Done(ctx, memory.IndexTurns, nil); err != nil || len(gone) != 0 {
		t.Errorf("MarkIndexed(nil) = %v, %v", gone, err)
	}
	chats, _ = pendingChats(ctx, s, memory.IndexTurns, 0)
	if got := chatIDs(chats); !reflect.DeepEqual(got, []string{"t2/two"}) {
		t.Errorf("UnindexedChats after indexing one = %v", got)
	}
	if b := backlog(t, s); b.Unindexed != 2 {
		t.Errorf("unindexed = %d, want 2", b.Unindexed)
	}
	// New turns start unindexed.
	mustAppend(t, s, memory.AppendRequest{Chat: one, Messages: turns("c", 2)})
	um, _ = s.UnindexedMessages(ctx, one, 0)
	if !reflect.DeepEqual(seqsOf(um), []int64{6, 7}) {
		t.Errorf("UnindexedMessages after append = %v, want [6 7]", seqsOf(um))
	}
	if err := s.Reset(ctx, memory.IndexTurns); err != nil {
		t.Fatal(err)
	}
	if b := backlog(t, s); b != (memory.Backlog{Unindexed: 10, Unsummarised: 10, UndrawnTurns: 10}) {
		t.Errorf("backlog after reset = %+v, want 10/10/10", b)
	}

	// Summary work: chats with at least minPending uncovered turns.
	work, err := s.ListSummaryWork(ctx, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := chatIDs(work); !reflect.DeepEqual(got, []string{"t1/one"}) {
		t.Errorf("ListSummaryWork(5) = %v", got)
	}
	if _, err := memory.AppendSummary(ctx, s, one, 0, memory.SummaryRecord{Summary: sampleSummary(1, 6, "six"), FromSeq: 1, ToSeq: 6}); err != nil {
		t.Fatal(err)
	}
	if b := backlog(t, s); b.Unsummarised != 4 {
		t.Errorf("unsummarised = %d, want 4 (1 of one + 3 of two)", b.Unsummarised)
	}
	work, _ = s.ListSummaryWork(ctx, 2, 0)
	if got := chatIDs(work); !reflect.DeepEqual(got, []string{"t2/two"}) {
		t.Errorf("ListSummaryWork(2) = %v", got)
	}
	work, _ = s.ListSummaryWork(ctx, 0, 0)
	if got := chatIDs(work); len(got) != 2 {
		t.Errorf("ListSummaryWork(0) = %v, want both chats (each has a pending turn)", got)
	}
	if _, err := memory.AppendSummary(ctx, s, one, 6, memory.SummaryRecord{Summary: sampleSummary(1, 7, "all"), FromSeq: 7, ToSeq: 7}); err != nil {
		t.Fatal(err)
	}
	work, _ = s.ListSummaryWork(ctx, 0, 0)
	if got := chatIDs(work); !reflect.DeepEqual(got, []string{"t2/two"}) {
		t.Errorf("ListSummaryWork(0) with one fully covered = %v, want only t2/two", got)
	}
	if b := backlog(t, s); b.Unsummarised != 3 {
		t.Errorf("unsummarised = %d, want 3", b.Unsummarised)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); sort.Strings(s); return s }

func sortedKeys(ks []memory.ChatKey) []memory.ChatKey {
	ks = slices.Clone(ks)
	slices.SortFunc(ks, func(a, b memory.ChatKey) int {
		return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.ChatID, b.ChatID))
	})
	return ks
}

func testSummaryWorkOrder(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	names := []string{"first", "second", "third"}
	for _, n := range names {
		mustAppend(t, s, memory.AppendRequest{Chat: key("t1", n), Messages: turns(n, 3)})
		time.Sleep(2 * time.Millisecond) // distinct arrival times
	}
	// New turns in the oldest chat do not push it back in the queue.
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "first"), Messages: turns("first-more", 3)})
	work, err := s.ListSummaryWork(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := chatIDs(work); !reflect.DeepEqual(got, []string{"t1/first", "t1/second", "t1/third"}) {
		t.Errorf("ListSummaryWork order = %v, want oldest work first", got)
	}
	work, _ = s.ListSummaryWork(ctx, 1, 2)
	if len(work) != 2 || work[0].ID != "first" {
		t.Errorf("ListSummaryWork(limit 2) = %v", chatIDs(work))
	}
	if work[0].LastSeq != 6 || work[0].SummaryCursor != 0 {
		t.Errorf("work chat = %+v", work[0])
	}
}

func testLeases(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "leased")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("l", 1)})
	try := func(kind, owner string, want bool) {
		t.Helper()
		ok, err := memory.TryLease(ctx, s, k, kind, owner, time.Minute)
		if err != nil || ok != want {
			t.Errorf("TryLease(%s, %s) = %v, %v; want %v", kind, owner, ok, err, want)
		}
	}
	try(memory.LeaseSummary, "w1", true)
	try(memory.LeaseSummary, "w2", false)
	try(memory.LeaseSummary, "w1", false) // never re-entered, even by its owner
	renew := func(owner string, want bool) {
		t.Helper()
		ok, err := s.RenewLease(ctx, k, memory.LeaseSummary, owner, time.Minute)
		if err != nil || ok != want {
			t.Errorf("RenewLease(%s) = %v, %v; want %v", owner, ok, err, want)
		}
	}
	renew("w1", true)
	renew("w2", false)
	try(memory.LeaseIndex, "w2", true) // kinds are independent
	try(memory.LeaseIndex, "w1", false)
	if err := memory.ReleaseLease(ctx, s, k, memory.LeaseSummary, "w2"); err != nil { // not w2's: no-op
		t.Fatal(err)
	}
	try(memory.LeaseSummary, "w2", false)
	if err := memory.ReleaseLease(ctx, s, k, memory.LeaseSummary, "w1"); err != nil {
		t.Fatal(err)
	}
	try(memory.LeaseSummary, "w2", true)
	try(memory.LeaseSummary, "w1", false)
	if err := memory.ReleaseLease(ctx, s, k, memory.LeaseSummary, "w1"); err != nil {
		t.Errorf("ReleaseLease of a lease not held: %v", err)
	}
	try(memory.LeaseSummary, "w1", false)
}

// testAppendKeepsTheChatsUser: a chat's user is fixed by its first
// append; an append naming another stores nothing and says whose the chat
// is, one naming none or the same user is stored.
func testAppendKeepsTheChatsUser(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	owned, anonymous := key("t1", "user-fixed"), key("t1", "user-none")
	mustAppend(t, s, memory.AppendRequest{Chat: owned, UserID: "u1", Messages: turns("uf", 2)})
	mustAppend(t, s, memory.AppendRequest{Chat: anonymous, Messages: turns("un", 1)})
	for k, owner := range map[memory.ChatKey]string{owned: "u1", anonymous: ""} {
		before, err := s.Chat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Append(ctx, memory.AppendRequest{Chat: k, UserID: "u2", Messages: turns("other", 1)})
		var uc *memory.UserConflictError
		if !errors.As(err, &uc) || uc.Owner != owner || !errors.Is(err, memory.ErrConflict) {
			t.Errorf("%s: append naming u2 = %v; want a UserConflictError (ErrConflict) naming %q", k.ChatID, err, owner)
		}
		if after, _ := s.Chat(ctx, k); after.LastSeq != before.LastSeq || after.UserID != owner {
			t.Errorf("%s: after the refused append last_seq %d → %d, user %q", k.ChatID, before.LastSeq, after.LastSeq, after.UserID)
		}
	}
	for _, user := range []string{"", "u1"} {
		if _, err := s.Append(ctx, memory.AppendRequest{Chat: owned, UserID: user, Messages: turns("ok-"+user, 1)}); err != nil {
			t.Errorf("append naming %q to u1's chat: %v", user, err)
		}
	}
	// Two first appends racing with different users: one lands, the other
	// is refused, never both.
	for i := range 8 {
		k := key("t1", fmt.Sprint("user-race-", i))
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for j, user := range []string{"ua", "ub"} {
			wg.Go(func() {
				_, errs[j] = s.Append(ctx, memory.AppendRequest{Chat: k, UserID: user, Messages: turns(user, 1)})
			})
		}
		wg.Wait()
		c := mustChat(t, s, k)
		landed := 0
		for _, err := range errs {
			if err == nil {
				landed++
			} else if !errors.Is(err, memory.ErrConflict) {
				t.Fatalf("racing append: %v", err)
			}
		}
		if landed != 1 || c.LastSeq != 1 {
			t.Errorf("race %d: %d appends landed, last_seq %d (user %q); want one", i, landed, c.LastSeq, c.UserID)
		}
	}
}

// testLeasesInOneWrite: TryLeases and ReleaseLeases are memory.TryLease and
// memory.ReleaseLease for several chats: a held, a free and a missing chat (and
// another tenant's chat of the same id) side by side.
func testLeasesInOneWrite(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	held, free, missing, other := key("t1", "lb-held"), key("t1", "lb-free"), key("t1", "lb-missing"), key("t2", "lb-free")
	for _, k := range []memory.ChatKey{held, free, other} {
		mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("lb", 1)})
	}
	if ok, err := memory.TryLease(ctx, s, held, memory.LeaseIndex, "w2", time.Minute); err != nil || !ok {
		t.Fatalf("TryLease(held) = %v, %v", ok, err)
	}
	keys := []memory.ChatKey{held, free, missing, other}
	taken, err := s.TryLeases(ctx, keys, memory.LeaseIndex, "w1", time.Minute)
	if err != nil || !slices.Equal(taken, []bool{false, true, false, true}) {
		t.Fatalf("TryLeases(held, free, missing, other tenant's) = %v, %v; want [false true false true]", taken, err)
	}
	if again, err := s.TryLeases(ctx, keys[1:2], memory.LeaseIndex, "w1", time.Minute); err != nil || !slices.Equal(again, []bool{false}) {
		t.Errorf("TryLeases of a lease w1 holds = %v, %v; want [false] (never re-entered)", again, err)
	}
	if ok, _ := s.RenewLease(ctx, free, memory.LeaseIndex, "w1", time.Minute); !ok {
		t.Error("a lease TryLeases took cannot be renewed by its owner")
	}
	if err := s.ReleaseLeases(ctx, keys, memory.LeaseIndex, "w1"); err != nil {
		t.Fatalf("ReleaseLeases: %v", err)
	}
	for k, want := range map[memory.ChatKey]bool{held: false, free: true, other: true} { // held stays w2's
		if ok, err := memory.TryLease(ctx, s, k, memory.LeaseIndex, "w3", time.Minute); err != nil || ok != want {
			t.Errorf("TryLease(%v) after ReleaseLeases = %v, %v; want %v", k, ok, err, want)
		}
	}
	if taken, err := s.TryLeases(ctx, nil, memory.LeaseIndex, "w1", time.Minute); err != nil || len(taken) != 0 {
		t.Errorf("TryLeases(none) = %v, %v", taken, err)
	}
	if err := s.ReleaseLeases(ctx, nil, memory.LeaseIndex, "w1"); err != nil {
		t.Errorf("ReleaseLeases(none) = %v", err)
	}
}

func testLeaseExpiry(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "expiring")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("e", 1)})
	if ok, err := memory.TryLease(ctx, s, k, memory.LeaseSummary, "crashed", 50*time.Millisecond); err != nil || !ok {
		t.Fatalf("TryLease = %v, %v", ok, err)
	}
	if ok, _ := memory.TryLease(ctx, s, k, memory.LeaseSummary, "w2", time.Minute); ok {
		t.Fatal("took an unexpired lease")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(60 * time.Millisecond)
		ok, err := memory.TryLease(ctx, s, k, memory.LeaseSummary, "w2", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expired lease could not be taken")
		}
	}
	if ok, _ := memory.TryLease(ctx, s, k, memory.LeaseSummary, "crashed", time.Minute); ok {
		t.Error("the old owner took back a lease held by another")
	}
	if ok, _ := s.RenewLease(ctx, k, memory.LeaseSummary, "crashed", time.Minute); ok {
		t.Error("the old owner renewed a lease held by another")
	}
}

func testLeaseContention(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	const rounds, workers = 5, 6
	for r := 0; r < rounds; r++ {
		k := key("t1", fmt.Sprintf("contended-%d", r))
		mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("c", 1)})
		var wg sync.WaitGroup
		start := make(chan struct{})
		got := make([]bool, workers)
		errs := make([]error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				<-start
				got[w], errs[w] = memory.TryLease(ctx, s, k, memory.LeaseSummary, fmt.Sprintf("worker-%d", w), time.Minute)
			}(w)
		}
		close(start)
		wg.Wait()
		n := 0
		for w := range got {
			if errs[w] != nil {
				t.Fatalf("TryLease: %v", errs[w])
			}
			if got[w] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("round %d: %d workers hold the lease, want 1", r, n)
		}
	}
}

func testDeleteChat(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k, other := key("t1", "doomed"), key("t1", "kept")
	mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "u", Messages: turns("d", 6)})
	mustAppend(t, s, memory.AppendRequest{Chat: other, UserID: "u", Messages: turns("k", 2)})
	mustMark(t, s, other, 1, 2)
	r1, err := memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{Summary: sampleSummary(1, 3, "x"), FromSeq: 1, ToSeq: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memory.AppendSummary(ctx, s, k, 3, memory.SummaryRecord{Summary: sampleSummary(1, 4, "y"), FromSeq: 4, ToSeq: 4}); err != nil {
		t.Fatal(err)
	}
	if ok, err := memory.TryLease(ctx, s, k, memory.LeaseSummary, "w1", time.Hour); err != nil || !ok {
		t.Fatal("lease", ok, err)
	}
	if err := s.DeleteChat(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteChat(ctx, k); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("second DeleteChat: %v, want ErrNotFound", err)
	}
	if _, err := s.Chat(ctx, k); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Chat after delete: %v", err)
	}
	if m, err := s.Messages(ctx, k, 0, 0); !errors.Is(err, memory.ErrNotFound) || len(m) != 0 {
		t.Errorf("Messages after delete: %d, %v", len(m), err)
	}
	if ch, err := s.SummaryChain(ctx, k); !errors.Is(err, memory.ErrNotFound) || len(ch) != 0 {
		t.Errorf("SummaryChain after delete: %d, %v", len(ch), err)
	}
	if l, err := pendingChats(ctx, s, memory.IndexTurns, 0); err != nil || len(l) != 0 {
		t.Errorf("UnindexedChats after delete: %v, %v", chatIDs(l), err)
	}
	if w, err := s.ListSummaryWork(ctx, 1, 0); err != nil || !reflect.DeepEqual(chatIDs(w), []string{"t1/kept"}) {
		t.Errorf("ListSummaryWork after delete: %v, %v", chatIDs(w), err)
	}
	if b := backlog(t, s); b != (memory.Backlog{Unindexed: 0, Unsummarised: 2, UndrawnTurns: 2}) {
		t.Errorf("backlog after delete = %+v, want only the kept chat's 2 unsummarised and undrawn", b)
	}
	if ids, err := memory.ChatsOfUser(ctx, s, "t1", "u"); err != nil || !reflect.DeepEqual(ids, []string{"kept"}) {
		t.Errorf("ChatsOfUser after delete = %v, %v", ids, err)
	}
	// The id can be used again, and nothing old shows through: not the
	// messages, the summary chain, the cursor nor the lease.
	res := mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "v", Messages: turns("d", 2)})
	if !res.Created || res.Appended != 2 || res.LastSeq != 2 || res.Chat.UserID != "v" {
		t.Errorf("re-created chat = %+v, want a new chat with seqs 1..2", res)
	}
	if h, err := s.SummaryHead(ctx, k); err != nil || h != nil {
		t.Errorf("re-created chat has summary %v, %v", h, err)
	}
	if c := mustChat(t, s, k); c.SummaryCursor != 0 {
		t.Errorf("re-created chat cursor = %d", c.SummaryCursor)
	}
	if ok, err := memory.TryLease(ctx, s, k, memory.LeaseSummary, "w2", time.Minute); err != nil || !ok {
		t.Errorf("old lease survived delete: TryLease = %v, %v", ok, err)
	}
	r, err := memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{Summary: sampleSummary(1, 2, "z"), FromSeq: 1, ToSeq: 2})
	if err != nil || r.ParentID != nil || r.Depth != 0 || r.ID == r1.ID {
		t.Errorf("first summary of the re-created chat = %+v, %v", r, err)
	}
}

func testChatsOfUser(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	for _, c := range []struct{ tenant, chat, user string }{
		{"t1", "c1", "ann"}, {"t1", "c2", "ann"}, {"t1", "c3", "bob"}, {"t2", "c4", "ann"},
	} {
		mustAppend(t, s, memory.AppendRequest{Chat: key(c.tenant, c.chat), UserID: c.user, Messages: turns(c.chat, 1)})
	}
	// A later append under another user id is refused: the chat stays ann's.
	if _, err := s.Append(ctx, memory.AppendRequest{Chat: key("t1", "c1"), UserID: "bob", Messages: turns("again", 1)}); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("append naming bob to ann's chat = %v; want ErrConflict", err)
	}
	for _, tc := range []struct {
		tenant, user string
		want         []string
	}{
		{"t1", "ann", []string{"c1", "c2"}},
		{"t1", "bob", []string{"c3"}},
		{"t2", "ann", []string{"c4"}},
		{"t2", "bob", []string{}},
	} {
		ids, err := memory.ChatsOfUser(ctx, s, tc.tenant, tc.user)
		if err != nil || !reflect.DeepEqual(sorted(ids), tc.want) {
			t.Errorf("ChatsOfUser(%s, %s) = %v, %v; want %v", tc.tenant, tc.user, ids, err, tc.want)
		}
	}
}

func testPing(t *testing.T, s memory.Backend) {
	if err := s.Ping(ctxT(t)); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// BenchmarkAppend appends batches of batchSize turns (about 300 bytes each,
// with metadata) to one chat and reports turns/s. Run it with
// -benchtime=Nx to fix the number of batches (200x = 10,000 turns in
// batches of 50).
func BenchmarkAppend(b *testing.B, open func(b *testing.B) memory.Backend, batchSize int) {
	s := open(b)
	defer s.Close()
	ctx := context.Background()
	k := key("bench", "chat")
	content := strings.Repeat("a turn of a fairly ordinary conversation; ", 7)
	batches := make([][]memory.Message, b.N)
	for i := range batches {
		batches[i] = make([]memory.Message, batchSize)
		for j := range batches[i] {
			role := memory.RoleUser
			if j%2 == 1 {
				role = memory.RoleAssistant
			}
			batches[i][j] = memory.Message{ID: fmt.Sprintf("b%d-m%d", i, j), Role: role, Content: content,
				Metadata: map[string]any{"turn": float64(j), "source": "bench"}}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := s.Append(ctx, memory.AppendRequest{Chat: k, UserID: "u", Messages: batches[i]})
		if err != nil {
			b.Fatal(err)
		}
		if res.Appended != batchSize {
			b.Fatalf("appended %d, want %d", res.Appended, batchSize)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "turns/s")
}

func ref(id string, seq int64) memory.MessageRef { return memory.MessageRef{ID: id, Seq: seq} }

// BenchmarkAppendParallel is BenchmarkAppend with GOMAXPROCS*parallelism
// goroutines, each appending to a chat of its own (writers of different
// chats do not wait for each other in PostgreSQL; in SQLite they queue on
// the single writer).
func BenchmarkAppendParallel(b *testing.B, open func(b *testing.B) memory.Backend, batchSize, parallelism int) {
	s := open(b)
	defer s.Close()
	ctx := context.Background()
	content := strings.Repeat("a turn of a fairly ordinary conversation; ", 7)
	var next sync.Mutex
	chat := 0
	b.SetParallelism(parallelism)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		next.Lock()
		chat++
		k := key("bench", fmt.Sprintf("chat-%d", chat))
		next.Unlock()
		for i := 0; pb.Next(); i++ {
			msgs := make([]memory.Message, batchSize)
			for j := range msgs {
				msgs[j] = memory.Message{ID: fmt.Sprintf("b%d-m%d", i, j), Role: memory.RoleUser, Content: content}
			}
			if _, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: msgs}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "turns/s")
}

// testMarkIndexedRaces: what the indexer read may change before it marks.
// A turn deleted meanwhile stays in the backlog (as a tombstone, whose
// points the indexer then takes out); a chat erased and created again
// under its id is gone, and the new chat's turns, episodes and facts are
// indexed anew (the indexer takes the id's points out).
func testMarkIndexedRaces(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "racy")
	mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "u", Messages: turns("r", 3)})
	read, err := s.Chat(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteMessage(ctx, k, "r-2"); err != nil { // while the indexer embeds turns 1..3
		t.Fatal(err)
	}
	if gone, err := s.Done(ctx, memory.IndexTurns, []memory.Mark{{Chat: k, Created: read.CreatedAt, Seqs: []int64{1, 2, 3}}}); err != nil || len(gone) != 0 {
		t.Fatalf("MarkIndexed = %v, %v", gone, err)
	}
	um, _ := s.UnindexedMessages(ctx, k, 0)
	if len(um) != 1 || um[0].Seq != 2 || !um[0].Deleted {
		t.Fatalf("after marking a turn deleted meanwhile, unindexed = %+v, want its tombstone", um)
	}
	if _, err := s.Done(ctx, memory.IndexTurns, []memory.Mark{{Chat: k, Created: read.CreatedAt, Forgotten: []int64{2}}}); err != nil {
		t.Fatal(err)
	}
	if um, _ := s.UnindexedMessages(ctx, k, 0); len(um) != 0 {
		t.Fatalf("the tombstone, its points taken out, is still unindexed: %+v", um)
	}

	// Erased and created again under its id while the indexer held turns
	// of the first chat.
	if err := s.DeleteChat(ctx, k); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // created_at has microseconds; make the second chat's differ for sure
	mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "u", Messages: turns("n", 2)})
	if _, err := s.Done(ctx, memory.IndexTurns, []memory.Mark{{Chat: k, Seqs: []int64{1}}}); err != nil { // the new chat's own indexer pass
		t.Fatal(err)
	}
	// The new chat's episode and fact, indexed in that pass too.
	eps, err := s.CloseEpisodes(ctx, k, 0, []memory.Episode{withFacts(episode(1, 2), fact("the new chat's fact", 1))})
	if err != nil {
		t.Fatal(err)
	}
	if err := doneIDs(ctx, s, memory.IndexEpisodes, k, []string{eps[0].ID}); err != nil {
		t.Fatal(err)
	}
	if err := doneIDs(ctx, s, memory.IndexFacts, k, []string{eps[0].Facts[0].ID}); err != nil {
		t.Fatal(err)
	}
	gone, err := s.Done(ctx, memory.IndexTurns, []memory.Mark{{Chat: k, Created: read.CreatedAt, Seqs: []int64{1, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gone, []memory.ChatKey{k}) {
		t.Errorf("the first chat's mark after the id was taken again: gone = %v, want %v", gone, k)
	}
	if um, _ := s.UnindexedMessages(ctx, k, 0); !reflect.DeepEqual(seqsOf(um), []int64{1, 2}) {
		t.Errorf("the new chat's turns unindexed = %v, want [1 2] (its points went with the id's)", seqsOf(um))
	}
	// Its episodes' and facts' points went with the id's too.
	if ue, _ := s.UnindexedEpisodes(ctx, k, 0); len(ue) != 1 {
		t.Errorf("the new chat's episodes unindexed = %d, want 1 (its points went with the id's)", len(ue))
	}
	if uf, _ := s.UnindexedFacts(ctx, k, 0); len(uf) != 1 {
		t.Errorf("the new chat's facts unindexed = %d, want 1 (its points went with the id's)", len(uf))
	}
}
