package ui

import (
	"context"
	"errors"
	"sort"
	"testing"

	"github.com/contextd/contextd/memory"
)

// fakeLister pages through rows the way the stores do: one tenant, by
// chat id, after a chat id, up to limit.
type fakeLister struct {
	rows []memory.ChatRow
	err  error
}

func (f fakeLister) ListChats(_ context.Context, q memory.ChatQuery) ([]memory.ChatRow, error) {
	var out []memory.ChatRow
	for _, r := range f.rows {
		if r.Tenant == q.Tenant && r.ID > q.After && len(out) < q.Limit {
			out = append(out, r)
		}
	}
	return out, f.err
}

func (fakeLister) UnindexedSeqs(context.Context, memory.ChatKey, int64, int64) ([]int64, error) {
	return nil, nil
}

func chatRows(tenant string, n int) []memory.ChatRow {
	out := make([]memory.ChatRow, n)
	for i := range out {
		out[i] = memory.ChatRow{Chat: memory.Chat{Tenant: tenant, ID: string(rune('a' + i)), LastSeq: 3, SummaryCursor: 1}, Unindexed: 1}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func TestCountTenantBacklog(t *testing.T) {
	other := chatRows("other", 9)
	for _, tc := range []struct {
		name        string
		rows        []memory.ChatRow
		page, pages int
		want        tenantBacklog
	}{
		{"no chats", other, 2, 3, tenantBacklog{}},
		{"one short page", append(chatRows("t", 1), other...), 2, 3, tenantBacklog{Backlog: memory.Backlog{Unindexed: 1, Unsummarised: 2}}},
		{"several pages", append(chatRows("t", 5), other...), 2, 3, tenantBacklog{Backlog: memory.Backlog{Unindexed: 5, Unsummarised: 10}}},
		{"stops at the bound", append(chatRows("t", 7), other...), 2, 3, tenantBacklog{Backlog: memory.Backlog{Unindexed: 6, Unsummarised: 12}, Partial: true}},
	} {
		got, err := countTenantBacklog(context.Background(), fakeLister{rows: tc.rows}, "t", tc.page, tc.pages)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	boom := errors.New("boom")
	if _, err := countTenantBacklog(context.Background(), fakeLister{err: boom}, "t", 2, 3); !errors.Is(err, boom) {
		t.Errorf("error: %v", err)
	}
}
