package engine

import (
	"testing"

	"github.com/contextd/contextd/memory"
)

// A name given a new dotted version in a sentence of change marks an older
// turn writing that name before another version; a question, a sentence
// without change, another name or a turn naming the new version too is
// left alone.
func TestVersionMovedOnMarks(t *testing.T) {
	older := "Here's the error. We're on python 3.10 and polars 0.19.12."
	for _, tc := range []struct {
		name, older, later string
		want               bool
	}{
		{"both moved", older, "Update a week later: platform team rebuilt the VM image, we're on python 3.12 now and they put polars 1.9.0 in it.", true},
		{"one upgraded", older, "Upgraded polars to 1.9.0 this morning, the job still runs.", true},
		{"asked", older, "should we move to python 3.12 now?", false},
		{"no change said", older, "python 3.12 has much better error messages.", false},
		{"another name", older, "we're on node 20.11 now for the frontend", false},
		{"a measure, not a version", "I returned the Ultraboost size 11.5, heel slippage.", "now I'm on the 990v5 size 10.5 and it fits", false},
		{"the assistant's advice", older, "Extended wear: try python 3.12 now, it is faster.", false},
		{"a price", "Lunch costs 12.50 at the canteen.", "Now parking costs 3.20 per hour, ugh.", false},
		{"a time", "The train leaves 10.15 from platform 2", "Now the bus leaves 11.05 from the stop outside", false},
		{"one more, not another", "It crashes on iOS 17.2 on my iPhone 13.", "Now it also crashes on iOS 17.4 on my iPad.", false},
		{"both said", "Install python 3.10 first.", "I switched python 3.11 to default now but the tutorial uses python 3.10.", false},
		{"the older names the new version too", "python 3.12 would need asyncpg 0.29; python 3.10 is fine for now", "we're on python 3.12 now", false},
	} {
		role := memory.RoleUser
		if tc.name == "the assistant's advice" {
			role = memory.RoleAssistant
		}
		update := markOf(tc.older, tc.later, 2, role)
		if got := update != ""; got != tc.want {
			t.Errorf("%s: marked %v (%q), want %v", tc.name, got, update, tc.want)
		}
	}
}
