package engine

import (
	"context"
	"errors"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// DeleteChat erases a chat from every store: vectors first, so that a
// failing index leaves the chat intact and the delete can be retried. An
// unknown chat is a 404, after a sweep of the index all the same: a retry
// of an erase whose last sweep failed (after the rows were gone) must not
// leave its vectors behind.
func (s *Service) DeleteChat(ctx context.Context, tenant, chatID string) error {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return err
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	chat, err := s.store.Chat(ctx, key)
	if errors.Is(err, memory.ErrNotFound) {
		if err := s.sweep(ctx, rag.Filter{Tenant: tenant, ChatIDs: []string{chatID}}); err != nil {
			return err
		}
	}
	if err != nil {
		return storeErr("read chat", err)
	}
	if err := s.sweep(ctx, rag.Filter{Tenant: tenant, ChatIDs: []string{chatID}}); err != nil {
		return err
	}
	if err := s.full.wrote("delete chat", s.store.DeleteChat(ctx, key)); err != nil {
		return err
	}
	if err := s.forgetChatInProfile(ctx, chat); err != nil {
		return err
	}
	// A turn indexed between the two deletes would survive: sweep again.
	if err := s.sweep(ctx, rag.Filter{Tenant: tenant, ChatIDs: []string{chatID}}); err != nil {
		return err
	}
	return nil
}

// DeleteUser erases every chat of a user; it returns how many.
func (s *Service) DeleteUser(ctx context.Context, tenant, userID string) (int, error) {
	if err := ValidateID("user_id", userID, true); err != nil {
		return 0, err
	}
	ids, err := memory.ChatsOfUser(ctx, s.store, tenant, userID)
	if err != nil {
		return 0, storeErr("list chats", err)
	}
	if len(ids) == 0 {
		// A retry of an erase that failed after the chats were gone: the
		// rest is swept all the same, and the answer is a 404.
		if err := s.eraseUserRest(ctx, tenant, userID); err != nil {
			return 0, err
		}
		return 0, notFound("user")
	}
	if err := s.sweep(ctx, rag.Filter{Tenant: tenant, UserID: userID}); err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		err := s.store.DeleteChat(ctx, memory.ChatKey{Tenant: tenant, ChatID: id})
		if err != nil && !errors.Is(err, memory.ErrNotFound) {
			return n, s.full.wrote("delete chat", err)
		}
		n++
	}
	return n, s.eraseUserRest(ctx, tenant, userID)
}

// eraseUserRest sweeps the index of a user's points and erases their
// profile: what is left once their chats are gone.
func (s *Service) eraseUserRest(ctx context.Context, tenant, userID string) error {
	if err := s.sweep(ctx, rag.Filter{Tenant: tenant, UserID: userID}); err != nil {
		return err
	}
	return s.full.wrote("delete profile", s.roles.profiles.DeleteProfile(ctx, tenant, userID))
}

// sweep deletes the filter's points from the vector index (nothing to do
// without one): an erase's, so a failure is the erase's error (indexErr).
func (s *Service) sweep(ctx context.Context, f rag.Filter) error {
	if s.vec.index == nil {
		return nil
	}
	if err := s.vec.index.Delete(ctx, f); err != nil {
		return s.indexErr("erase", err)
	}
	return nil
}
