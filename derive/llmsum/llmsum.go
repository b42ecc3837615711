// Package llmsum is contextd's LLM summarizer, through langchaingo. It
// extends the running summary from its previous version and only the new
// turns, folding them in chunks that fit a per-call input budget, and falls
// back to another summarizer (the extractive one) when the LLM fails.
package llmsum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// Degraded reasons this package reports.
const (
	// DegradedNarrativeOnly: the model's reply was not a valid JSON summary;
	// its text became the narrative and the structured lists were kept.
	DegradedNarrativeOnly = memory.DegradedNarrativeOnly
	// DegradedLLMUnavailable: the model failed or timed out after retries;
	// the fallback summarizer did the work.
	DegradedLLMUnavailable = memory.DegradedLLMUnavailable
)

// Options tune the summarizer. Zero values take the defaults noted.
type Options struct {
	// Timeout bounds one LLM call (default DefaultTimeout).
	Timeout time.Duration
	// InputBudgetTokens bounds the input of one call: prompts, the existing
	// summary and the new turns (default 3000). New turns beyond it are
	// folded in chunks.
	InputBudgetTokens int
	// MaxRetries is how many times a failed call is retried (0 = default 2;
	// negative = no retry).
	MaxRetries int
	// Backoff is the first retry's delay, doubled each time (default 500ms).
	Backoff time.Duration
	// Fallback summarizes when the LLM stays unavailable (nil: the error is
	// returned).
	Fallback memory.Summarizer
	// ModelName is recorded in Summary.Model when the request names no model.
	ModelName string
	// Logger is told why the LLM failed when a fallback took over (nil:
	// slog's default).
	Logger *slog.Logger
}

// Summarizer implements memory.Summarizer with an LLM.
type Summarizer struct {
	model llms.Model
	opts  Options
	now   func() time.Time
}

var _ memory.Summarizer = (*Summarizer)(nil)

func (s *Summarizer) log() *slog.Logger {
	if s.opts.Logger != nil {
		return s.opts.Logger
	}
	return slog.Default()
}

// DefaultTimeout bounds one LLM call (llm.timeout's default).
const DefaultTimeout = 60 * time.Second

// New returns an LLM summarizer. model may be nil (no LLM configured): every
// call then goes to the fallback with "llm_unavailable".
func New(model llms.Model, opts Options) *Summarizer {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.InputBudgetTokens <= 0 {
		opts.InputBudgetTokens = 3000
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 2
	} else if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.ModelName == "" {
		opts.ModelName = "llm"
	}
	return &Summarizer{model: model, opts: opts, now: time.Now}
}

// Name implements memory.Summarizer.
func (s *Summarizer) Name() string { return s.opts.ModelName }

// UsesLLM implements memory.Summarizer.
func (s *Summarizer) UsesLLM() bool { return true }

// PromptVersion is the version a summary written with these prompts records.
func (s *Summarizer) PromptVersion(p memory.Prompts) string {
	return ResolvePrompts(p, "").Version()
}

// Summarize implements memory.Summarizer.
func (s *Summarizer) Summarize(ctx context.Context, req memory.SummarizeRequest) (memory.SummarizeResult, error) {
	var res memory.SummarizeResult
	prompts := ResolvePrompts(req.Prompts, "")
	system := prompts.System
	var format *ReplyFormat // nil: a narrative in prose
	if req.Structured {
		f := SummaryReply()
		format = &f
	} else {
		system += narrativeOnly
	}
	var cur *memory.Summary
	if req.Prev != nil {
		c := req.Prev.Clone()
		cur = &c
	}
	turns := items(req)
	if cur == nil && len(turns) == 0 {
		empty := memory.Summary{PromptVersion: prompts.Version()}
		empty.Normalize()
		return memory.SummarizeResult{Summary: empty}, nil
	}
	// With no new turns and a previous summary this is a refresh: one
	// extension call rewrites the summary under the current prompts.
	first := true
	for first || len(turns) > 0 {
		first = false
		user, n := s.nextCall(prompts, system, req.Structured, cur, turns)
		reply, err := s.call(ctx, req.Model, format, system, user, &res)
		if err != nil {
			if ctx.Err() != nil {
				return memory.SummarizeResult{}, ctx.Err()
			}
			return s.fallback(ctx, req, cur, turns, res, err)
		}
		next := s.apply(cur, reply, req.Structured, req.MaxTokens, &res)
		if len(turns) > 0 {
			if next.CoveredFromSeq == 0 {
				next.CoveredFromSeq = firstSeq(req)
			}
			next.CoveredToSeq = turns[n-1].seq
		}
		cur = &next
		turns = turns[n:]
	}
	out := *cur
	out.Stale = false
	out.Model = s.opts.ModelName
	if req.Model != "" {
		out.Model = req.Model
	}
	out.PromptVersion = prompts.Version()
	out.UpdatedAt = s.now().UTC()
	// A model that retells the episodes' gists repeats the ones that say
	// the same; the root says each once.
	out.Narrative = memory.UniqueSentences(out.Narrative)
	tokens.Fit(&out, req.MaxTokens)
	out.Normalize()
	res.Summary = out
	return res, nil
}

// EstimateInput is about how many tokens Summarize would send for req:
// the system and user prompts of each call, the new material cut into
// the same chunks (each chunk given the current summary as req.Prev is).
// The worker weighs an extension's cost with it before asking.
func (s *Summarizer) EstimateInput(req memory.SummarizeRequest) int {
	prompts := ResolvePrompts(req.Prompts, "")
	system := prompts.System
	if !req.Structured {
		system += narrativeOnly
	}
	turns := items(req)
	if req.Prev == nil && len(turns) == 0 {
		return 0
	}
	total := 0
	for first := true; first || len(turns) > 0; first = false {
		user, n := s.nextCall(prompts, system, req.Structured, req.Prev, turns)
		total += tokens.Count(system) + tokens.Count(user)
		turns = turns[n:]
	}
	return total
}

// nextCall builds the user prompt for the next call and reports how many of
// turns it carries: as many as fit the input budget, at least one.
func (s *Summarizer) nextCall(p memory.Prompts, system string, structured bool, cur *memory.Summary, turns []item) (string, int) {
	tmpl, existing := p.Compression, ""
	if cur != nil {
		tmpl = p.Extension
		existing = cur.Narrative
		if structured {
			existing = summaryJSON(*cur)
		}
	}
	overhead := tokens.Count(system) + tokens.Count(tmpl) + tokens.Count(existing)
	// However large the summary, leave new turns a quarter of the budget.
	room := max(s.opts.InputBudgetTokens-overhead, s.opts.InputBudgetTokens/4)
	var b strings.Builder
	n, used := 0, 0
	for _, t := range turns {
		line := t.text
		tk := tokens.Count(line) + 1
		if n > 0 && used+tk > room {
			break
		}
		if tk > room { // one oversized turn: cut it to the budget
			line = tokens.Truncate(line, room-1)
			tk = room
		}
		b.WriteString(line)
		b.WriteByte('\n')
		used += tk
		n++
	}
	msgs := strings.TrimSpace(b.String())
	if len(turns) == 0 {
		msgs = "(no new messages; rewrite the summary under the current instructions)"
	}
	if cur == nil {
		return withPlaceholders(tmpl, map[string]string{PlaceholderTranscript: msgs}), n
	}
	return withPlaceholders(tmpl, map[string]string{PlaceholderExistingSummary: existing, PlaceholderNewMessages: msgs}), n
}

// withPlaceholders fills tmpl; a value whose placeholder the template lacks
// (config validation should prevent it) is appended rather than lost.
func withPlaceholders(tmpl string, values map[string]string) string {
	out := fill(tmpl, values)
	for _, k := range []string{PlaceholderExistingSummary, PlaceholderTranscript, PlaceholderNewMessages} {
		if v, ok := values[k]; ok && !strings.Contains(tmpl, k) {
			out += "\n\n" + v
		}
	}
	return out
}

// firstSeq is the first seq the request's new material covers.
func firstSeq(req memory.SummarizeRequest) int64 {
	if len(req.Episodes) > 0 {
		return req.Episodes[0].FromSeq
	}
	if len(req.Turns) > 0 {
		return req.Turns[0].Seq
	}
	return 0
}

// call runs one LLM request with a deadline, retrying failures with
// exponential backoff. It counts calls and tokens into res. A call with a
// format asks for JSON (in the format's schema where the model can); one
// without asks for prose.
func (s *Summarizer) call(ctx context.Context, model string, format *ReplyFormat, system, user string, res *memory.SummarizeResult) (string, error) {
	if s.model == nil {
		return "", errors.New("llmsum: no model configured")
	}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, system),
		llms.TextParts(llms.ChatMessageTypeHuman, user),
	}
	opts := []llms.CallOption{llms.WithTemperature(0)}
	if model != "" {
		opts = append(opts, llms.WithModel(model))
	}
	if format != nil {
		opts = append(opts, llms.WithJSONMode())
		ctx = withReply(ctx, *format)
	}
	st := &callStatus{}
	ctx = context.WithValue(ctx, callStatusKey{}, st)
	var lastErr error
	delay := s.opts.Backoff
	for attempt := 0; attempt <= s.opts.MaxRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(delay):
			}
			delay *= 2
		}
		text, err := s.generate(ctx, msgs, opts, res)
		if err == nil {
			return text, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		wait, retry := st.next()
		if !retry || !fits(ctx, wait) {
			break // a refusal (a bad key) stays one; a wait past the deadline is no retry
		}
		delay = max(delay, wait)
	}
	return "", lastErr
}

// fits reports whether a wait of d leaves ctx time to call again.
func fits(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) > d
}

func (s *Summarizer) generate(ctx context.Context, msgs []llms.MessageContent, opts []llms.CallOption, res *memory.SummarizeResult) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res.Calls++
	resp, err := s.model.GenerateContent(cctx, msgs, opts...)
	if err != nil {
		return "", fmt.Errorf("llmsum: generate: %w", err)
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return "", errors.New("llmsum: empty response")
	}
	ch := resp.Choices[0]
	in := intOf(ch.GenerationInfo, "PromptTokens", "InputTokens", "input_tokens")
	out := intOf(ch.GenerationInfo, "CompletionTokens", "OutputTokens", "output_tokens")
	if in <= 0 {
		for _, m := range msgs {
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					in += tokens.Count(t.Text)
				}
			}
		}
	}
	if out <= 0 {
		out = tokens.Count(ch.Content)
	}
	res.InputTokens += in
	res.OutputTokens += out
	return ch.Content, nil
}

func intOf(info map[string]any, keys ...string) int {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return v
		case int32:
			return int(v)
		case int64:
			return int(v)
		case float64:
			return int(v)
		}
	}
	return 0
}

// apply turns one reply into the next summary. A reply that is not a JSON
// summary keeps the previous lists and becomes the narrative.
func (s *Summarizer) apply(cur *memory.Summary, reply string, structured bool, maxTokens int, res *memory.SummarizeResult) memory.Summary {
	var next memory.Summary
	if cur != nil {
		next = cur.Clone()
	}
	parsed, err := ParseSummary(reply)
	narrCap := MaxNarrativeChars
	if maxTokens > 0 {
		narrCap = min(narrCap, maxTokens*4)
	}
	switch {
	case err == nil && structured:
		parsed.CoveredFromSeq, parsed.CoveredToSeq = next.CoveredFromSeq, next.CoveredToSeq
		next = parsed
	case err == nil: // narrative asked for, JSON given anyway
		next.Narrative = parsed.Narrative
	default:
		if structured {
			addDegraded(res, DegradedNarrativeOnly)
		}
		if text := salvageNarrative(Clean(reply)); text != "" {
			next.Narrative = capRunes(text, narrCap)
		}
	}
	return next
}

var narrativeFieldRe = regexp.MustCompile(`"narrative"\s*:\s*"((?:[^"\\]|\\.)*)`)

// salvageNarrative takes the narrative field out of a truncated or broken
// JSON reply when there is one, else returns the text as it is.
func salvageNarrative(text string) string {
	if m := narrativeFieldRe.FindStringSubmatch(text); m != nil {
		var v string
		if err := json.Unmarshal([]byte(`"`+m[1]+`"`), &v); err == nil && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return text
}

func addDegraded(res *memory.SummarizeResult, reason string) {
	for _, d := range res.Degraded {
		if d == reason {
			return
		}
	}
	res.Degraded = append(res.Degraded, reason)
}

// fallback hands the turns the LLM did not summarise to the fallback
// summarizer, on top of what the LLM did summarise.
func (s *Summarizer) fallback(ctx context.Context, req memory.SummarizeRequest, cur *memory.Summary, left []item, res memory.SummarizeResult, cause error) (memory.SummarizeResult, error) {
	if s.opts.Fallback == nil {
		return memory.SummarizeResult{}, cause
	}
	freq := req
	freq.Prev = cur
	freq.Episodes, freq.Turns = nil, nil
	if len(left) > 0 {
		from := left[0].seq
		for _, ep := range req.Episodes {
			if ep.ToSeq >= from {
				freq.Episodes = append(freq.Episodes, ep)
			}
		}
		for _, t := range req.Turns {
			if t.Seq >= from {
				freq.Turns = append(freq.Turns, t)
			}
		}
	}
	s.log().Warn("llm summary failed; the fallback summarised", "err", cause)
	fres, err := s.opts.Fallback.Summarize(ctx, freq)
	if err != nil {
		return memory.SummarizeResult{}, fmt.Errorf("llmsum: fallback after %v: %w", cause, err)
	}
	fres.Degraded = append(res.Degraded, fres.Degraded...)
	fres.InputTokens += res.InputTokens
	fres.OutputTokens += res.OutputTokens
	fres.Calls += res.Calls
	addDegraded(&fres, DegradedLLMUnavailable)
	return fres, nil
}
