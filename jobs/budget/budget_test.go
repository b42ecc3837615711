package budget

import (
	"testing"
	"time"
)

func TestDaily(t *testing.T) {
	now := time.Date(2026, 1, 2, 23, 0, 0, 0, time.UTC)
	var told int
	b := &Daily{Limit: 100, Now: func() time.Time { return now }, OnSpend: func(_ string, in, out int) { told += in + out }}
	steps := []struct {
		name      string
		tenant    string
		in, out   int
		advance   time.Duration
		used      int64
		exhausted bool
	}{
		{"below the cap", "t1", 40, 10, 0, 50, false},
		{"at the cap", "t1", 40, 10, 0, 100, true},
		{"another tenant is apart", "t2", 0, 0, 0, 0, false},
		{"nothing spent counts nothing", "t1", 0, 0, 0, 100, true},
		{"a new UTC day starts afresh", "t1", 5, 0, 2 * time.Hour, 5, false},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		b.Spend(s.tenant, s.in, s.out)
		if got := b.UsedToday(s.tenant); got != s.used {
			t.Errorf("%s: used %d, want %d", s.name, got, s.used)
		}
		if got := b.Exhausted(s.tenant); got != s.exhausted {
			t.Errorf("%s: exhausted %v, want %v", s.name, got, s.exhausted)
		}
	}
	if told != 105 {
		t.Errorf("OnSpend told %d tokens, want 105", told)
	}
	var zero Daily
	zero.Spend("t", 1000, 1000)
	if zero.Exhausted("t") || zero.UsedToday("t") != 2000 {
		t.Errorf("the zero budget caps nothing and counts: %v %d", zero.Exhausted("t"), zero.UsedToday("t"))
	}
}
