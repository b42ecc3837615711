package engine

import (
	"context"

	"github.com/contextd/contextd/memory"
)

// Chat returns one chat of the tenant (its user, agent, last seq and
// summary cursor); 404 when the tenant has no such chat.
func (s *Service) Chat(ctx context.Context, tenant, chatID string) (memory.Chat, error) {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return memory.Chat{}, err
	}
	chat, err := s.store.Chat(ctx, memory.ChatKey{Tenant: tenant, ChatID: chatID})
	if err != nil {
		return memory.Chat{}, storeErr("read chat", err)
	}
	return chat, nil
}

// PolicyOf is the agent's effective settings, as every use case resolves
// them (an agent agents.yaml does not define gets the supervisor's).
func (s *Service) PolicyOf(agent string) Policy { return s.policy(agent) }
