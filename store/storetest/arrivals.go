package storetest

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// undrawnOf lists the chats with undrawn turns as "tenant/chat:cursor".
func undrawnOf(t *testing.T, s memory.Backend) []string {
	t.Helper()
	l, err := s.Pending(ctxT(t), memory.DrawFacts, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, u := range l {
		out = append(out, u.Chat.Tenant+"/"+u.Chat.ID+":"+strconv.FormatInt(u.Cursor, 10))
	}
	return sorted(out)
}

// The facts-on-arrival backlog: new turns are past the cursor, marks move
// it forward only, never past last_seq, and skip chats gone or re-created.
func testArrivalBacklog(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	one, two := key("t1", "one"), key("t2", "two")
	if got := undrawnOf(t, s); len(got) != 0 {
		t.Fatalf("empty store undrawn = %v", got)
	}
	mustAppend(t, s, memory.AppendRequest{Chat: one, Messages: turns("a", 5)})
	mustAppend(t, s, memory.AppendRequest{Chat: two, Messages: turns("b", 3)})
	if got, want := undrawnOf(t, s), []string{"t1/one:0", "t2/two:0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("undrawn = %v, want %v", got, want)
	}
	c1, err := s.Chat(ctx, one)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		marks []memory.Mark
		want  []string
		drawn int64 // UndrawnTurns after the marks
	}{
		{"forward", []memory.Mark{{Chat: one, Created: c1.CreatedAt, ToSeq: 3}}, []string{"t1/one:3", "t2/two:0"}, 5},
		{"never back", []memory.Mark{{Chat: one, ToSeq: 1}}, []string{"t1/one:3", "t2/two:0"}, 5},
		{"another chat under the id", []memory.Mark{{Chat: one, Created: c1.CreatedAt.Add(time.Second), ToSeq: 5}}, []string{"t1/one:3", "t2/two:0"}, 5},
		{"gone chats skipped, the rest in one write", []memory.Mark{{Chat: key("t1", "missing"), ToSeq: 1}, {Chat: key("t2", "one"), ToSeq: 9},
			{Chat: one, ToSeq: 5}, {Chat: two, ToSeq: 99}}, []string{}, 0},
		{"none", nil, []string{}, 0},
	}
	for _, st := range steps {
		if err := drawn(ctx, s, st.marks); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := undrawnOf(t, s); !reflect.DeepEqual(got, st.want) {
			t.Errorf("%s: undrawn = %v, want %v", st.name, got, st.want)
		}
		if b := backlog(t, s); b.UndrawnTurns != st.drawn {
			t.Errorf("%s: UndrawnTurns = %d, want %d", st.name, b.UndrawnTurns, st.drawn)
		}
	}
	// Past last_seq is capped: the next turn is undrawn again.
	mustAppend(t, s, memory.AppendRequest{Chat: two, Messages: turns("c", 1)})
	if got, want := undrawnOf(t, s), []string{"t2/two:3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after an append = %v, want %v", got, want)
	}
	if l, err := s.Pending(ctx, memory.DrawFacts, 1); err != nil || len(l) != 1 || l[0].Chat.LastSeq != 4 {
		t.Errorf("UndrawnChats(1) = %+v, %v", l, err)
	}
}
