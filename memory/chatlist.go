package memory

import (
	"context"
	"fmt"
)

// ChatRow is one line of a chat listing: the chat and its index backlog.
type ChatRow struct {
	Chat
	// Unindexed counts the chat's turns not yet in the vector index.
	Unindexed int64
}

// ChatLister pages through a tenant's chats (the inspector, a dump, a
// user's erasure).
type ChatLister interface {
	ChatPager
	// UnindexedSeqs returns the seqs in [from, to] of the chat that are not
	// yet indexed, in seq order.
	UnindexedSeqs(ctx context.Context, key ChatKey, from, to int64) ([]int64, error)
}

// ChatQuery selects a page of a tenant's chats (ChatLister.ListChats).
type ChatQuery struct {
	Tenant string
	// Prefix keeps the chats whose chat id or user id starts with it.
	Prefix string
	// UserID keeps only this user's chats ("": any user's).
	UserID string
	// After and Limit page by chat id.
	After string
	Limit int
}

// chatsPage is how many chats ChatsOfUser reads at once.
const chatsPage = 500

// ChatPager pages through a tenant's chats.
type ChatPager interface {
	// ListChats returns up to q.Limit (> 0) chats of q.Tenant, ordered by
	// chat id, starting after the chat id q.After (keyset paging): those
	// whose chat id or user id starts with q.Prefix ("" matches all) and,
	// when q.UserID is set, that user owns.
	ListChats(ctx context.Context, q ChatQuery) ([]ChatRow, error)
}

// ChatsOfUser lists the chat ids a user owns in a tenant, by chat id
// (never nil). A user id is never empty: a chat without one is nobody's.
func ChatsOfUser(ctx context.Context, l ChatPager, tenant, userID string) ([]string, error) {
	ids := []string{}
	if userID == "" {
		return ids, nil
	}
	for after := ""; ; {
		rows, err := l.ListChats(ctx, ChatQuery{Tenant: tenant, UserID: userID, After: after, Limit: chatsPage})
		if err != nil {
			return nil, fmt.Errorf("chats of user: %w", err)
		}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		if len(rows) < chatsPage {
			return ids, nil
		}
		after = rows[len(rows)-1].ID
	}
}
