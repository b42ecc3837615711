package engine

import (
	"context"
	"errors"

	"github.com/contextd/contextd/memory"
)

// ExportChat emits the dump of one chat of the tenant (the dump format:
// the chat, its messages, summary records, episodes and facts).
// not_found for an unknown chat (another tenant's included); an emit error
// is returned as it is.
func (s *Service) ExportChat(ctx context.Context, tenant, chatID string, emit func(memory.DumpRecord) error) error {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return err
	}
	return s.export(ctx, memory.DumpScope{Tenant: tenant, ChatID: chatID}, "chat", emit)
}

// ExportUser emits the dump of every chat of a user in the tenant and the
// user's profile. not_found when the tenant has neither a chat nor a
// profile of the user.
func (s *Service) ExportUser(ctx context.Context, tenant, userID string, emit func(memory.DumpRecord) error) error {
	if err := ValidateID("user_id", userID, true); err != nil {
		return err
	}
	return s.export(ctx, memory.DumpScope{Tenant: tenant, UserID: userID}, "user", emit)
}

func (s *Service) export(ctx context.Context, scope memory.DumpScope, what string, emit func(memory.DumpRecord) error) error {
	var emitErr error
	emit = ExportFilter(emit)
	err := s.roles.dumper.Dump(ctx, scope, func(r memory.DumpRecord) error {
		if emitErr = emit(r); emitErr != nil {
			return emitErr
		}
		return nil
	})
	switch {
	case err == nil:
		return nil
	case emitErr != nil && errors.Is(err, emitErr):
		return emitErr
	case errors.Is(err, memory.ErrNotFound):
		return notFound(what)
	}
	return storeErr("export", err)
}
