package memory

import "context"

// ChatRow is one line of a chat listing: the chat and its index backlog.
type ChatRow struct {
	Chat
	// Unindexed counts the chat's turns not yet in the vector index.
	Unindexed int64
}

// ChatLister pages through a tenant's chats for the inspector.
type ChatLister interface {
	// ListChats returns up to limit chats of the tenant whose chat id or
	// user id starts with prefix ("" matches all), ordered by chat id,
	// starting after the chat id after (keyset paging).
	ListChats(ctx context.Context, tenant, prefix, after string, limit int) ([]ChatRow, error)
	// UnindexedSeqs returns the seqs in [from, to] of the chat that are not
	// yet indexed, in seq order.
	UnindexedSeqs(ctx context.Context, key ChatKey, from, to int64) ([]int64, error)
}
