package engine

import (
	"context"
	"errors"
	"io"

	"github.com/contextd/contextd/memory"
)

// Transfer is the export and import use case: chats and users in the dump
// format, checked as the API checks what it takes. The service answers
// through one; `contextd import` builds its own (NewTransfer), needing no
// background job.
type Transfer struct {
	store  ChatStore
	dumper memory.Dumper
	limits Limits
	full   *DiskFull
}

// NewTransfer builds the use case from d's Store, Dumper, Limits and Full
// (nil: its own), the rest of d unused.
func NewTransfer(d Deps) *Transfer {
	full := d.Full
	if full == nil {
		full = &DiskFull{}
	}
	return &Transfer{store: d.Store, dumper: d.Dumper, limits: d.Limits, full: full}
}

// ExportChat is Transfer.ExportChat.
func (s *Service) ExportChat(ctx context.Context, tenant, chatID string, emit func(memory.DumpRecord) error) error {
	return s.transfer.ExportChat(ctx, tenant, chatID, emit)
}

// ExportUser is Transfer.ExportUser.
func (s *Service) ExportUser(ctx context.Context, tenant, userID string, emit func(memory.DumpRecord) error) error {
	return s.transfer.ExportUser(ctx, tenant, userID, emit)
}

// Import is Transfer.Import.
func (s *Service) Import(ctx context.Context, r io.Reader) (ImportResult, error) {
	return s.transfer.Import(ctx, r)
}

// ExportChat emits the dump of one chat of the tenant (the dump format:
// the chat, its messages, summary records, episodes and facts).
// not_found for an unknown chat (another tenant's included); an emit error
// is returned as it is.
func (s *Transfer) ExportChat(ctx context.Context, tenant, chatID string, emit func(memory.DumpRecord) error) error {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return err
	}
	return s.export(ctx, memory.DumpScope{Tenant: tenant, ChatID: chatID}, "chat", emit)
}

// ExportUser emits the dump of every chat of a user in the tenant and the
// user's profile. not_found when the tenant has neither a chat nor a
// profile of the user.
func (s *Transfer) ExportUser(ctx context.Context, tenant, userID string, emit func(memory.DumpRecord) error) error {
	if err := ValidateID("user_id", userID, true); err != nil {
		return err
	}
	return s.export(ctx, memory.DumpScope{Tenant: tenant, UserID: userID}, "user", emit)
}

func (s *Transfer) export(ctx context.Context, scope memory.DumpScope, what string, emit func(memory.DumpRecord) error) error {
	var emitErr error
	emit = ExportFilter(emit)
	err := s.dumper.Dump(ctx, scope, func(r memory.DumpRecord) error {
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
