// Package budget owns the tenants' daily LLM token budget
// (llm.daily_token_budget): one counter, built once in cmd/contextd and
// given to everything that spends tokens — the summary jobs, the profiler,
// the condenser — so that every use of the model spends from it.
package budget

import (
	"sync"
	"time"

	"github.com/contextd/contextd/memory"
)

// Daily counts the LLM tokens each tenant spent since UTC midnight, in this
// process, against Limit. The zero value counts without a cap.
type Daily struct {
	// Limit caps the tokens (input + output) per tenant per UTC day;
	// 0 = no cap (the tokens are still counted).
	Limit int64
	// Now is the clock the day is read from (nil: time.Now).
	Now func() time.Time
	// OnSpend, when set, is told every spend of more than 0 tokens (the
	// tokens metric).
	OnSpend func(tenant string, in, out int)

	mu    sync.Mutex
	usage map[string]dayUsage
}

var _ memory.TokenBudget = (*Daily)(nil)

type dayUsage struct {
	day    string
	tokens int64
}

// Exhausted reports whether the tenant spent today's Limit.
func (b *Daily) Exhausted(tenant string) bool {
	return b.Limit > 0 && b.UsedToday(tenant) >= b.Limit
}

// Spend counts tokens the model used for the tenant, against the budget
// and to OnSpend.
func (b *Daily) Spend(tenant string, in, out int) {
	b.add(tenant, int64(in+out))
	if b.OnSpend != nil && in+out > 0 {
		b.OnSpend(tenant, in, out)
	}
}

// UsedToday is the LLM tokens (input + output) spent for the tenant since
// UTC midnight.
func (b *Daily) UsedToday(tenant string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.usage[tenant]
	if u.day != b.day() {
		return 0
	}
	return u.tokens
}

func (b *Daily) add(tenant string, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.usage == nil {
		b.usage = map[string]dayUsage{}
	}
	u := b.usage[tenant]
	if d := b.day(); u.day != d {
		u = dayUsage{day: d}
	}
	u.tokens += n
	b.usage[tenant] = u
}

func (b *Daily) day() string {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	return now().UTC().Format(time.DateOnly)
}
