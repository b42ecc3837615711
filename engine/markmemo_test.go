package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// The memo gives the mark markUpdate gives, for the turn as shown and the
// updates as they are: a new update, another text of the turn or another
// chat is read again, never served from an entry of another.
func TestMarkMemoAsMarkUpdate(t *testing.T) {
	chat := memory.Chat{Tenant: "t", ID: "c1", CreatedAt: time.Unix(1000, 0)}
	ups := readUpdate(memory.Message{Seq: 10, Role: "user", Content: "the door code is 7312 now, the old one doesn't work"}, nil)
	more := append(slices.Clip(ups), readUpdate(memory.Message{Seq: 12, Role: "user", Content: "actually the door code is 5590 now"}, ups)...)
	memo := newMarkMemo()
	for _, tc := range []struct {
		name    string
		chat    memory.Chat
		ups     []chatUpdate
		content string
	}{
		{"first read", chat, ups, "door code 4471, key under the mat"},
		{"served", chat, ups, "door code 4471, key under the mat"},
		{"another update", chat, more, "door code 4471, key under the mat"},
		{"another text", chat, more, "the bins go out on tuesday"},
		{"another chat", memory.Chat{Tenant: "t", ID: "c2", CreatedAt: chat.CreatedAt}, ups, "door code 4471, key under the mat"},
	} {
		want := RAGTurn{Seq: 3, Role: "user", Content: tc.content}
		markUpdate(tc.ups, &want)
		got := RAGTurn{Seq: 3, Role: "user", Content: tc.content}
		memo.mark(tc.chat, tc.ups, &got)
		if got.update != want.update || !slices.Equal(got.updateSeqs, want.updateSeqs) {
			t.Errorf("%s: mark %q %v, want %q %v", tc.name, got.update, got.updateSeqs, want.update, want.updateSeqs)
		}
		if tc.name == "first read" && want.update == "" {
			t.Fatal("the update marks nothing: the test reads no mark")
		}
	}
	if len(memo.m) != 4 {
		t.Errorf("%d entries for 4 versions of a turn", len(memo.m))
	}
}
