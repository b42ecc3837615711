package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextd/contextd/store/sqlite"
)

// New refuses deps without a required collaborator, naming each missing
// one: a wiring bug is found by the first test that builds the service.
func TestNewNamesMissingDeps(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, tc := range []struct {
		name  string
		drop  func(*Deps)
		wants []string
	}{
		{"complete", func(*Deps) {}, nil},
		{"no store", func(d *Deps) { d.Store = nil }, []string{"Store"}},
		{"no summary worker", func(d *Deps) { d.SummaryJobs, d.Previews = nil, nil }, []string{"SummaryJobs", "Previews"}},
		{"no store roles", func(d *Deps) { d.Episodes, d.Facts, d.Forget = nil, nil, nil }, []string{"Episodes", "Facts", "Forget"}},
		{"optional ones unset", func(d *Deps) { d.Index, d.Retriever, d.Indexer, d.Arrivals, d.Policy = nil, nil, nil, nil, nil }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := testDeps(st)
			tc.drop(&d)
			var got string
			func() {
				defer func() {
					if r := recover(); r != nil {
						got = r.(error).Error()
					}
				}()
				New(d)
			}()
			if (got == "") != (len(tc.wants) == 0) {
				t.Fatalf("New panicked with %q, want missing %v", got, tc.wants)
			}
			for _, w := range tc.wants {
				if !strings.Contains(got, w) {
					t.Errorf("panic %q does not name %s", got, w)
				}
			}
		})
	}
}
