package rag_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// fakeStore is an in-memory store with exactly the roles the indexer
// (rag.IndexSource) and the retriever (rag.Neighbours) ask for.
type fakeStore struct {
	mu      sync.Mutex
	chats   map[memory.ChatKey]*fakeChat
	leases  map[string]string // kind/tenant/chat -> owner
	failErr error             // returned by every call when set
}

type fakeChat struct {
	chat    memory.Chat
	msgs    []memory.Message
	indexed map[int64]bool
}

func newFakeStore() *fakeStore {
	return &fakeStore{chats: map[memory.ChatKey]*fakeChat{}, leases: map[string]string{}}
}

var fakeT0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// add appends messages with the given contents (roles alternate).
func (s *fakeStore) add(tenant, chatID, user, agent string, contents ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	c := s.chats[k]
	if c == nil {
		c = &fakeChat{chat: memory.Chat{Tenant: tenant, ID: chatID, UserID: user, Agent: agent}, indexed: map[int64]bool{}}
		s.chats[k] = c
	}
	for _, content := range contents {
		seq := int64(len(c.msgs) + 1)
		role := memory.RoleUser
		if seq%2 == 0 {
			role = memory.RoleAssistant
		}
		c.msgs = append(c.msgs, memory.Message{ID: fmt.Sprint(seq), Seq: seq, Role: role, Content: content,
			CreatedAt: fakeT0.Add(time.Duration(seq) * time.Second)})
	}
	c.chat.LastSeq = int64(len(c.msgs))
}

func (s *fakeStore) Chat(_ context.Context, k memory.ChatKey) (memory.Chat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return memory.Chat{}, s.failErr
	}
	c := s.chats[k]
	if c == nil {
		return memory.Chat{}, memory.ErrNotFound
	}
	return c.chat, nil
}

func (s *fakeStore) MessagesBySeq(_ context.Context, k memory.ChatKey, seqs []int64) ([]memory.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return nil, s.failErr
	}
	c := s.chats[k]
	if c == nil {
		return nil, memory.ErrNotFound
	}
	var out []memory.Message
	for _, m := range c.msgs {
		if slices.Contains(seqs, m.Seq) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (s *fakeStore) UnindexedChats(_ context.Context, limit int) ([]memory.Chat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return nil, s.failErr
	}
	var out []memory.Chat
	for _, c := range s.chats {
		if len(c.indexed) < len(c.msgs) {
			out = append(out, c.chat)
		}
	}
	slices.SortFunc(out, func(a, b memory.Chat) int {
		if a.Tenant+"/"+a.ID < b.Tenant+"/"+b.ID {
			return -1
		}
		return 1
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *fakeStore) UnindexedMessages(_ context.Context, k memory.ChatKey, limit int) ([]memory.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return nil, s.failErr
	}
	c := s.chats[k]
	if c == nil {
		return nil, memory.ErrNotFound
	}
	var out []memory.Message
	for _, m := range c.msgs {
		if !c.indexed[m.Seq] && len(out) < limit {
			out = append(out, m)
		}
	}
	return out, nil
}

func (s *fakeStore) MarkIndexed(_ context.Context, k memory.ChatKey, seqs []int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return s.failErr
	}
	c := s.chats[k]
	if c == nil {
		return memory.ErrNotFound
	}
	for _, q := range seqs {
		c.indexed[q] = true
	}
	return nil
}

func (s *fakeStore) unindexed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.chats {
		n += len(c.msgs) - len(c.indexed)
	}
	return n
}

func (s *fakeStore) ResetIndexed(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.chats {
		c.indexed = map[int64]bool{}
	}
	return nil
}

var (
	_ rag.IndexSource = (*fakeStore)(nil)
	_ rag.Neighbours  = (*fakeStore)(nil)
)

func leaseKey(k memory.ChatKey, kind string) string { return kind + "/" + k.Tenant + "/" + k.ChatID }

func (s *fakeStore) TryLease(_ context.Context, k memory.ChatKey, kind, owner string, _ time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return false, s.failErr
	}
	if _, ok := s.leases[leaseKey(k, kind)]; ok { // never re-entered
		return false, nil
	}
	s.leases[leaseKey(k, kind)] = owner
	return true, nil
}

func (s *fakeStore) RenewLease(_ context.Context, k memory.ChatKey, kind, owner string, _ time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return false, s.failErr
	}
	return s.leases[leaseKey(k, kind)] == owner, nil
}

func (s *fakeStore) ReleaseLease(_ context.Context, k memory.ChatKey, kind, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leases[leaseKey(k, kind)] == owner {
		delete(s.leases, leaseKey(k, kind))
	}
	return nil
}

func (s *fakeStore) deleteChat(k memory.ChatKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.chats, k)
}
