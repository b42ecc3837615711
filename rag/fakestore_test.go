package rag_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// fakeStore is an in-memory store with exactly the roles the indexer
// (rag.IndexSource, memory.FactStore) and the retriever (rag.Neighbors) ask
// for.
type fakeStore struct {
	mu      sync.Mutex
	chats   map[memory.ChatKey]*fakeChat
	leases  map[string]string // kind/tenant/chat -> owner
	failErr error             // returned by every call when set
	marks   int               // Done(IndexTurns) calls
	lists   int               // Pending(IndexTurns) calls (a drain makes one or more)
	listed  []time.Time       // when each was made
	leaseW  int               // lease takes and releases (each a write in a real store)
}

type fakeChat struct {
	chat         memory.Chat
	msgs         []memory.Message
	indexed      map[int64]bool
	facts        []memory.Fact
	factsIndexed map[string]bool
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
		c = &fakeChat{chat: memory.Chat{Tenant: tenant, ID: chatID, UserID: user, Agent: agent}, indexed: map[int64]bool{},
			factsIndexed: map[string]bool{}}
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

func (s *fakeStore) unindexed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.chats {
		n += len(c.msgs) - len(c.indexed)
	}
	return n
}

var (
	_ index.Source     = (*fakeStore)(nil)
	_ rag.Neighbors    = (*fakeStore)(nil)
	_ memory.FactStore = (*fakeStore)(nil)
)

func leaseKey(k memory.ChatKey, kind string) string { return kind + "/" + k.Tenant + "/" + k.ChatID }

func (s *fakeStore) TryLeases(_ context.Context, keys []memory.ChatKey, kind, owner string, _ time.Duration) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return nil, s.failErr
	}
	s.leaseW++
	taken := make([]bool, len(keys))
	for i, k := range keys {
		taken[i] = s.chats[k] != nil && s.tryLease(k, kind, owner)
	}
	return taken, nil
}

func (s *fakeStore) ReleaseLeases(_ context.Context, keys []memory.ChatKey, kind, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaseW++
	for _, k := range keys {
		if s.leases[leaseKey(k, kind)] == owner {
			delete(s.leases, leaseKey(k, kind))
		}
	}
	return nil
}

func (s *fakeStore) tryLease(k memory.ChatKey, kind, owner string) bool {
	if _, ok := s.leases[leaseKey(k, kind)]; ok { // never re-entered
		return false
	}
	s.leases[leaseKey(k, kind)] = owner
	return true
}

func (s *fakeStore) RenewLease(_ context.Context, k memory.ChatKey, kind, owner string, _ time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return false, s.failErr
	}
	return s.leases[leaseKey(k, kind)] == owner, nil
}

func (s *fakeStore) deleteChat(k memory.ChatKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.chats, k)
}

// forget tombstones a turn, as deleting one message does, and puts it back
// in the backlog.
func (s *fakeStore) forget(k memory.ChatKey, seq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[k]
	m := &c.msgs[seq-1]
	m.Content, m.Deleted = "", true
	delete(c.indexed, seq)
}

// addFacts stores facts of a chat (their ids are derived when empty).
func (s *fakeStore) addFacts(k memory.ChatKey, facts ...memory.Fact) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[k]
	for _, f := range facts {
		if f.ID == "" {
			f.ID = memory.FactID(k.Tenant, k.ChatID, f.Seqs, f.Text)
		}
		f.ChatID = k.ChatID
		c.facts = append(c.facts, f)
	}
}

func (s *fakeStore) AddFacts(_ context.Context, k memory.ChatKey, facts []memory.Fact) ([]memory.Fact, error) {
	s.addFacts(k, facts...)
	return facts, nil
}

func (s *fakeStore) Facts(ctx context.Context, k memory.ChatKey, q memory.FactQuery) ([]memory.Fact, error) {
	if q.ByID {
		return s.factsByID(ctx, k, q.IDs)
	}
	afterSeq, limit, superseded := q.AfterSeq, q.Limit, q.IncludeSuperseded
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[k]
	if c == nil {
		return nil, memory.ErrNotFound
	}
	var out []memory.Fact
	for _, f := range c.facts {
		if f.FirstSeq() > afterSeq && (superseded || f.SupersededBy == "") && (limit <= 0 || len(out) < limit) {
			out = append(out, f)
		}
	}
	return out, nil
}

func (s *fakeStore) factsByID(_ context.Context, k memory.ChatKey, ids []string) ([]memory.Fact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []memory.Fact
	if c := s.chats[k]; c != nil {
		for _, f := range c.facts {
			if slices.Contains(ids, f.ID) {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// SupersedeFacts flags the old facts and puts them back in the backlog, so
// their points are re-upserted with the flag.
func (s *fakeStore) SupersedeFacts(_ context.Context, k memory.ChatKey, oldToNew map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[k]
	if c == nil {
		return memory.ErrNotFound
	}
	for i, f := range c.facts {
		if n, ok := oldToNew[f.ID]; ok {
			c.facts[i].SupersededBy = n
			delete(c.factsIndexed, f.ID)
		}
	}
	return nil
}

func (s *fakeStore) UnindexedFacts(_ context.Context, k memory.ChatKey, limit int) ([]memory.Fact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[k]
	if c == nil {
		return nil, memory.ErrNotFound
	}
	var out []memory.Fact
	for _, f := range c.facts {
		if !c.factsIndexed[f.ID] && len(out) < limit {
			out = append(out, f)
		}
	}
	return out, nil
}

// Pending lists the chats with unindexed turns (sorted by key) or facts;
// the fake keeps no episodes.
func (s *fakeStore) Pending(_ context.Context, kind memory.WorkKind, limit int) ([]memory.PendingChat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if kind == memory.IndexTurns {
		s.lists++
		s.listed = append(s.listed, time.Now())
	}
	if s.failErr != nil {
		return nil, s.failErr
	}
	out := []memory.PendingChat{}
	for _, c := range s.chats {
		if kind == memory.IndexTurns && len(c.indexed) < len(c.msgs) || kind == memory.IndexFacts && len(c.factsIndexed) < len(c.facts) {
			out = append(out, memory.PendingChat{Chat: c.chat})
		}
	}
	slices.SortFunc(out, func(a, b memory.PendingChat) int {
		if a.Chat.Tenant+"/"+a.Chat.ID < b.Chat.Tenant+"/"+b.Chat.ID {
			return -1
		}
		return 1
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Done marks turns or facts indexed; chats not found are gone.
func (s *fakeStore) Done(_ context.Context, kind memory.WorkKind, marks []memory.Mark) ([]memory.ChatKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return nil, s.failErr
	}
	if kind == memory.IndexTurns {
		s.marks++
	}
	var gone []memory.ChatKey
	for _, m := range marks {
		c := s.chats[m.Chat]
		if c == nil {
			gone = append(gone, m.Chat)
			continue
		}
		for _, q := range append(slices.Clone(m.Seqs), m.Forgotten...) {
			c.indexed[q] = true
		}
		for _, id := range m.IDs {
			c.factsIndexed[id] = true
		}
	}
	return gone, nil
}

// Reset marks every turn or fact unindexed.
func (s *fakeStore) Reset(_ context.Context, kind memory.WorkKind) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.chats {
		switch kind {
		case memory.IndexTurns:
			c.indexed = map[int64]bool{}
		case memory.IndexFacts:
			c.factsIndexed = map[string]bool{}
		}
	}
	return nil
}

func (s *fakeStore) UnindexedEpisodes(context.Context, memory.ChatKey, int) ([]memory.Episode, error) {
	return nil, nil
}
