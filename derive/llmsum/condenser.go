package llmsum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/truncation"
)

// Condenser shortens one message with the LLM, for the "llm" truncation
// strategy. The caller falls back to another strategy on error.
type Condenser struct {
	model   llms.Model
	timeout time.Duration
	name    string  // model override ("" = the model's default)
	health  *Health // nil: always call
	// Budget is the tenants' daily token budget (nil: no cap), the tenant
	// the one in the request's context: once spent, Condense fails at once
	// with truncation.ErrUnavailable and the caller falls back.
	Budget memory.TokenBudget
}

// NewCondenser returns a Condenser. timeout bounds each call (default 30s);
// modelName overrides the model's default model when not empty. With a
// health (the model's own, so that every user of the model feeds it), a
// model whose last call failed within DownFor is not called: Condense
// fails at once with truncation.ErrUnavailable, and the caller falls back.
func NewCondenser(model llms.Model, timeout time.Duration, modelName string, health *Health) *Condenser {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &Condenser{model: model, timeout: timeout, name: modelName, health: health}
}

// Condense asks the LLM to rewrite text in at most maxChars characters
// (runes). Text already short enough is returned as is, without a call. The
// reply is cleaned of template tokens and hard-cut to maxChars if the model
// overshoots.
func (c *Condenser) Condense(ctx context.Context, text string, maxChars int) (string, error) {
	if maxChars <= 0 || utf8.RuneCountInString(text) <= maxChars {
		return text, nil
	}
	if c == nil || c.model == nil {
		return "", errors.New("llmsum: condenser has no model")
	}
	if c.health != nil && c.health.failedWithin(DownFor) {
		return "", fmt.Errorf("llmsum: condense: the model failed less than %s ago: %w", DownFor, truncation.ErrUnavailable)
	}
	tenant := memory.TenantFromContext(ctx)
	if c.Budget != nil && c.Budget.Exhausted(tenant) {
		return "", fmt.Errorf("llmsum: condense: the daily token budget (llm.daily_token_budget) is spent: %w", truncation.ErrUnavailable)
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	opts := []llms.CallOption{llms.WithTemperature(0)}
	if c.name != "" {
		opts = append(opts, llms.WithModel(c.name))
	}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, fmt.Sprintf(
			"Condense the user's text to at most %d characters. Keep names, numbers, decisions and requests; drop filler. Reply with the condensed text only.", maxChars)),
		llms.TextParts(llms.ChatMessageTypeHuman, text),
	}
	resp, err := c.model.GenerateContent(cctx, msgs, opts...)
	if err != nil && cctx.Err() != nil && ctx.Err() == nil { // the clients put the cause in words
		return "", fmt.Errorf("llmsum: condense: no answer within %s: %w", c.timeout, context.DeadlineExceeded)
	}
	if err != nil {
		return "", fmt.Errorf("llmsum: condense: %w", err)
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return "", errors.New("llmsum: condense: empty response")
	}
	if c.Budget != nil {
		gi := resp.Choices[0].GenerationInfo
		c.Budget.Spend(tenant, intOf(gi, "PromptTokens", "InputTokens", "input_tokens"), intOf(gi, "CompletionTokens", "OutputTokens", "output_tokens"))
	}
	out := strings.TrimSpace(Clean(resp.Choices[0].Content))
	if out == "" {
		return "", errors.New("llmsum: condense: empty reply")
	}
	return capRunes(out, maxChars), nil
}
