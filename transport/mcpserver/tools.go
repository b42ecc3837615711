package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/internal/admit"
)

// tools binds the MCP tools to the engine. Each returns its answer as
// structured content (the HTTP API's JSON) and a plain-text rendering.
type tools struct {
	e     Engine
	reads *admit.Gate   // get_context and search_memory pass it, as their HTTP routes do
	wait  time.Duration // at most this long (0: no bound but the call's)
}

// admitted runs fn once the read gate lets it in; a call still waiting
// after the wait gets the HTTP API's timeout error.
func (t tools) admitted(ctx context.Context, fn func() (*mcp.CallToolResult, any, error)) (*mcp.CallToolResult, any, error) {
	wctx := ctx
	if t.wait > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, t.wait)
		defer cancel()
	}
	if err := t.reads.Enter(wctx); err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return nil, nil, toolError{Code: "request_canceled", Message: "the client went away while the call waited for its turn"}
		}
		return nil, nil, toolError{Code: "timeout", Message: "request timed out waiting for its turn (server.request_timeout)"}
	}
	defer t.reads.Leave()
	return fn()
}

// object is a tool's structured output: the HTTP API's JSON answer.
type object = map[string]any

func toObject(v any) object {
	b, _ := json.Marshal(v)
	var o object
	_ = json.Unmarshal(b, &o)
	return o
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type contextIn struct {
	ChatID       string `json:"chat_id"`
	Query        string `json:"query,omitempty"`
	Agent        string `json:"agent,omitempty"`
	UserID       string `json:"user_id,omitempty"`
	BudgetTokens *int   `json:"budget_tokens,omitempty"`
	Strategy     string `json:"strategy,omitempty"`
	Since        string `json:"since,omitempty"`
	Until        string `json:"until,omitempty"`
}

var contextSchema = obj(map[string]schema{
	"chat_id":       str("the chat to build the context of"),
	"query":         str("the current user query: retrieval looks for what is relevant to it"),
	"agent":         str("the agent whose settings apply (default: the chat's)"),
	"user_id":       str("the chat's user, when this call creates the chat"),
	"budget_tokens": integer("the most tokens the context may take, at least 1 (default from the agent's settings)"),
	"strategy":      str("how the context is built (default from the agent's settings)", "none", "running_summary", "rag_augmented"),
	"since":         str("RFC 3339: retrieve only turns and episodes from this time on"),
	"until":         str("RFC 3339: retrieve only turns and episodes up to this time"),
}, "chat_id")

// getContext hands the answer to the SDK as it is (encoded once, on the
// wire): a context is the largest answer, and a round trip through a map
// would cost more than the HTTP API's whole request.
func (t tools) getContext(ctx context.Context, req *mcp.CallToolRequest, in contextIn) (*mcp.CallToolResult, any, error) {
	return t.admitted(ctx, func() (*mcp.CallToolResult, any, error) { return t.buildContext(ctx, req, in) })
}

func (t tools) buildContext(ctx context.Context, req *mcp.CallToolRequest, in contextIn) (*mcp.CallToolResult, any, error) {
	res, err := t.e.Context(ctx, tenantOf(req), engine.ContextInput{ChatID: in.ChatID, Query: in.Query, Agent: in.Agent,
		UserID: in.UserID, BudgetTokens: in.BudgetTokens, Strategy: in.Strategy, Since: in.Since, Until: in.Until})
	if err != nil {
		return nil, nil, asToolError(err)
	}
	out := text(res.Context)
	out.StructuredContent = res.Answer(nil)
	return out, nil, nil
}

type searchIn struct {
	Query  string   `json:"query"`
	ChatID string   `json:"chat_id,omitempty"`
	UserID string   `json:"user_id,omitempty"`
	K      *int     `json:"k,omitempty"`
	Since  string   `json:"since,omitempty"`
	Until  string   `json:"until,omitempty"`
	Kinds  []string `json:"kinds,omitempty"`
	// MinScore overrides the agent's rag_similarity_threshold.
	MinScore *float64 `json:"min_score,omitempty"`
}

var searchSchema = obj(map[string]schema{
	"query":     str("what to look for"),
	"chat_id":   str("search this chat only"),
	"user_id":   str("search this user's chats (without chat_id)"),
	"k":         integer("how many hits, 1 to 100 (default 10)"),
	"since":     str("RFC 3339: only hits from this time on"),
	"until":     str("RFC 3339: only hits up to this time"),
	"kinds":     array("which kinds of memory to search (default all)", str("a kind of memory", "turn", "episode", "fact")),
	"min_score": number("leave out hits whose similarity is below this, -1 to 1 (default: the agent's rag_similarity_threshold)"),
}, "query")

func (t tools) search(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
	return t.admitted(ctx, func() (*mcp.CallToolResult, any, error) { return t.searchMemory(ctx, req, in) })
}

func (t tools) searchMemory(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
	res, err := t.e.Search(ctx, tenantOf(req), engine.SearchInput{Query: in.Query, ChatID: in.ChatID, UserID: in.UserID,
		K: in.K, Since: in.Since, Until: in.Until, Kinds: in.Kinds, MinScore: in.MinScore})
	if err != nil {
		return nil, nil, asToolError(err)
	}
	var b strings.Builder
	for _, h := range res.Hits {
		when := ""
		if !h.CreatedAt.IsZero() {
			when = h.CreatedAt.UTC().Format(time.DateOnly) + " "
		}
		switch h.Kind {
		case "episode":
			fmt.Fprintf(&b, "[%s%s turns %d-%d, score %.3f] %s\n", when, h.ChatID, h.FromSeq, h.ToSeq, h.Score, h.Content)
		case "fact":
			fmt.Fprintf(&b, "[%s%s fact from turns %v, score %.3f] %s\n", when, h.ChatID, h.Seqs, h.Score, h.Content)
		default:
			fmt.Fprintf(&b, "[%s%s #%d %s, score %.3f] %s\n", when, h.ChatID, h.Seq, h.Role, h.Score, h.Content)
		}
	}
	if len(res.Hits) == 0 {
		b.WriteString("no hits")
	}
	if len(res.Degraded) > 0 {
		fmt.Fprintf(&b, "\n(degraded: %s)", strings.Join(res.Degraded, ", "))
	}
	return text(strings.TrimRight(b.String(), "\n")), toObject(res), nil
}

type messageIn struct {
	ID        string `json:"id,omitempty"`
	Role      string `json:"role"`
	Name      string `json:"name,omitempty"`
	Content   string `json:"content"`
	CreatedAt string `json:"created_at,omitempty"`
}

type addIn struct {
	ChatID   string      `json:"chat_id"`
	UserID   string      `json:"user_id,omitempty"`
	Agent    string      `json:"agent,omitempty"`
	Messages []messageIn `json:"messages"`
}

var addSchema = obj(map[string]schema{
	"chat_id": str("the chat to append to (created on first use)"),
	"user_id": str("the chat's user, fixed by its first append"),
	"agent":   str("the chat's agent, fixed by its first append"),
	"messages": array("the turns, in order", obj(map[string]schema{
		"id":         str("your id for the message: makes the append idempotent"),
		"role":       str("who spoke", "user", "assistant", "system", "tool"),
		"name":       str("the speaker, or the agent that wrote it"),
		"content":    str("the text of the turn"),
		"created_at": str("RFC 3339 time of the turn (default now)"),
	}, "role", "content")),
}, "chat_id", "messages")

func (t tools) addMessages(ctx context.Context, req *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
	msgs := make([]engine.InMessage, len(in.Messages))
	for i, m := range in.Messages {
		msgs[i] = engine.InMessage{ID: m.ID, Role: m.Role, Name: m.Name, Content: m.Content}
		if m.CreatedAt != "" {
			at, err := time.Parse(time.RFC3339, m.CreatedAt)
			if err != nil {
				return nil, nil, toolError{Code: "invalid_time", Field: fmt.Sprintf("messages[%d].created_at", i),
					Message: fmt.Sprintf("%q is not an RFC 3339 time", m.CreatedAt)}
			}
			msgs[i].CreatedAt = &at
		}
	}
	out, err := t.e.Append(ctx, tenantOf(req), in.ChatID, engine.AppendInput{UserID: in.UserID, Agent: in.Agent, Messages: msgs})
	if err != nil {
		return nil, nil, asToolError(err)
	}
	return text(fmt.Sprintf("stored %d turn(s), %d duplicate(s); the chat's last seq is %d", out.Appended, out.Duplicates, out.LastSeq)),
		toObject(out), nil
}

type chatIn struct {
	ChatID string `json:"chat_id"`
}

var chatSchema = obj(map[string]schema{"chat_id": str("the chat")}, "chat_id")

func (t tools) getSummary(ctx context.Context, req *mcp.CallToolRequest, in chatIn) (*mcp.CallToolResult, any, error) {
	v, err := t.e.SummaryView(ctx, tenantOf(req), in.ChatID, toolChainRecords)
	if err != nil {
		return nil, nil, asToolError(err)
	}
	sum, chain := v.Summary, v.Chain
	eps, err := t.e.LatestEpisodes(ctx, tenantOf(req), in.ChatID, engine.SummaryEpisodes)
	if err != nil {
		return nil, nil, asToolError(err)
	}
	out := object{"summary": toObject(sum), "chain": toObject(map[string]any{"c": chain})["c"],
		"episodes": toObject(map[string]any{"e": eps})["e"], "preview": v.Preview}
	var b strings.Builder
	switch {
	case sum == nil:
		b.WriteString("the chat has no summary yet")
	case v.Preview: // what a context would show; the worker stores it shortly
		b.WriteString("(preview, not stored yet)\n" + engine.RenderSummary(*sum))
	default:
		b.WriteString(engine.RenderSummary(*sum))
	}
	for _, e := range eps {
		fmt.Fprintf(&b, "\n[episode, turns %d-%d] %s", e.FromSeq, e.ToSeq, e.Short)
	}
	return text(b.String()), out, nil
}

func (t tools) deleteChat(ctx context.Context, req *mcp.CallToolRequest, in chatIn) (*mcp.CallToolResult, any, error) {
	if err := t.e.DeleteChat(ctx, tenantOf(req), in.ChatID); err != nil {
		return nil, nil, asToolError(err)
	}
	return text("chat " + in.ChatID + " erased"), object{"deleted": in.ChatID}, nil
}

var deleteMessageSchema = obj(map[string]schema{
	"chat_id":    str("the chat"),
	"message_id": str("the id of the message to forget"),
}, "chat_id", "message_id")

type messageRefIn struct {
	ChatID    string `json:"chat_id" jsonschema:"the chat"`
	MessageID string `json:"message_id" jsonschema:"the id of the message to forget"`
}

func (t tools) deleteMessage(ctx context.Context, req *mcp.CallToolRequest, in messageRefIn) (*mcp.CallToolResult, any, error) {
	if err := t.e.DeleteMessage(ctx, tenantOf(req), in.ChatID, in.MessageID); err != nil {
		return nil, nil, asToolError(err)
	}
	return text("message " + in.MessageID + " of chat " + in.ChatID + " forgotten"),
		object{"chat_id": in.ChatID, "deleted": in.MessageID}, nil
}

type userIn struct {
	UserID string `json:"user_id"`
}

var userSchema = obj(map[string]schema{"user_id": str("the user")}, "user_id")

func (t tools) getUserProfile(ctx context.Context, req *mcp.CallToolRequest, in userIn) (*mcp.CallToolResult, any, error) {
	pr, err := t.e.UserProfile(ctx, tenantOf(req), in.UserID)
	if err != nil {
		return nil, nil, asToolError(err)
	}
	txt := engine.RenderProfile(*pr)
	if txt == "" {
		txt = "nothing is known about this user yet"
	}
	return text(txt), object{"user_id": in.UserID, "profile": toObject(pr)}, nil
}

// toolChainRecords is how many records of the summary chain get_summary
// gives: a tool's answer goes into an agent's context, which needs the
// head, not the history of every extension.
const toolChainRecords = 5
