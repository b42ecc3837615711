package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/contextd/contextd/memory"
)

// testChatList pages a tenant's chats by chat id, filters by chat or user
// id prefix, counts each chat's unindexed turns and never shows another
// tenant's chats.
func testChatList(t *testing.T, s memory.Backend) {
	l := s
	ctx := ctxT(t)
	for i := 1; i <= 5; i++ {
		mustAppend(t, s, memory.AppendRequest{Chat: key("t1", fmt.Sprintf("c%d", i)), UserID: fmt.Sprintf("u%d", i%2),
			Messages: turns(fmt.Sprintf("c%d", i), i)})
	}
	mustAppend(t, s, memory.AppendRequest{Chat: key("t2", "c9"), Messages: turns("o", 1)})
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "x_%"), UserID: "zed", Messages: turns("x", 1)})
	mustMark(t, s, key("t1", "c3"), 1, 3)

	var got []string
	after := ""
	for {
		page, err := l.ListChats(ctx, memory.ChatQuery{Tenant: "t1", After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 2 {
			t.Fatalf("page of %d rows, limit 2", len(page))
		}
		for _, r := range page {
			got = append(got, r.ID)
			if r.Tenant != "t1" {
				t.Fatalf("row of tenant %q", r.Tenant)
			}
			if r.ID == "c3" && (r.Unindexed != 1 || r.LastSeq != 3) {
				t.Fatalf("c3: unindexed %d last_seq %d, want 1 and 3", r.Unindexed, r.LastSeq)
			}
			if r.ID == "c5" && r.Unindexed != 5 {
				t.Fatalf("c5: unindexed %d, want 5", r.Unindexed)
			}
		}
		after = page[len(page)-1].ID
	}
	if want := []string{"c1", "c2", "c3", "c4", "c5", "x_%"}; !slices.Equal(got, want) {
		t.Fatalf("paged chats %v, want %v", got, want)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{{"c4", []string{"c4"}}, {"u0", []string{"c2", "c4"}}, {"x_", []string{"x_%"}}, {"x%", nil}, {"_", nil}, {"z", []string{"x_%"}}} {
		rows, err := l.ListChats(ctx, memory.ChatQuery{Tenant: "t1", Prefix: tc.prefix, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("prefix %q: %v, want %v", tc.prefix, ids, tc.want)
		}
	}
	chatListByUser(t, l)
	seqs, err := l.UnindexedSeqs(ctx, key("t1", "c3"), 1, 3)
	if err != nil || !slices.Equal(seqs, []int64{2}) {
		t.Fatalf("unindexed seqs %v %v, want [2]", seqs, err)
	}
	if seqs, _ := l.UnindexedSeqs(ctx, key("t2", "c3"), 1, 3); len(seqs) != 0 {
		t.Fatalf("other tenant sees seqs %v", seqs)
	}
}

// chatListByUser: on testChatList's chats, a user's chats are paged by
// chat id like the others, prefix and all.
func chatListByUser(t *testing.T, l memory.ChatLister) {
	t.Helper()
	ctx := ctxT(t)
	for _, tc := range []struct {
		user, prefix, after string
		want                []string
	}{{"u0", "", "", []string{"c2", "c4"}}, {"u1", "", "c1", []string{"c3", "c5"}}, {"u1", "c5", "", []string{"c5"}}, {"u", "", "", nil}} {
		rows, err := l.ListChats(ctx, memory.ChatQuery{Tenant: "t1", UserID: tc.user, Prefix: tc.prefix, After: tc.after, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("user %q, prefix %q, after %q: %v, want %v", tc.user, tc.prefix, tc.after, ids, tc.want)
		}
	}
}
