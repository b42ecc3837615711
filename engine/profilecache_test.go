package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/contextd/contextd/memory"
)

type countingProfiles struct {
	version         int64
	reads, versions int
}

func (c *countingProfiles) Profile(context.Context, string, string) (memory.ProfileState, int64, error) {
	c.reads++
	st := memory.ProfileState{}
	st.Profile.UserPreferences = []memory.ProfileItem{{Text: fmt.Sprint("v", c.version)}}
	return st, c.version, nil
}

func (c *countingProfiles) ProfileVersion(context.Context, string, string) (int64, error) {
	c.versions++
	return c.version, nil
}

func (c *countingProfiles) SaveProfile(context.Context, string, string, memory.ProfileState, int64) error {
	return nil
}

func (c *countingProfiles) Done(context.Context, memory.WorkKind, []memory.Mark) ([]memory.ChatKey, error) {
	return nil, nil
}
func (c *countingProfiles) DeleteProfile(context.Context, string, string) error { return nil }

// TestProfileCacheTrustsTheRowsVersion: with the version read with the
// chat row, a cached profile of that version costs no read; a newer
// version (or none known) is checked and read as before.
func TestProfileCacheTrustsTheRowsVersion(t *testing.T) {
	ps := &countingProfiles{version: 1}
	c := &profileCache{m: map[[2]string]cachedProfile{}}
	ctx := context.Background()
	get := func(seen int64) string {
		t.Helper()
		p, err := c.get(ctx, ps, "t", "u", seen)
		if err != nil || len(p.UserPreferences) != 1 {
			t.Fatalf("get(%d) = %+v, %v", seen, p, err)
		}
		return p.UserPreferences[0].Text
	}
	get(1) // first read: version and profile
	get(1)
	get(1)
	if ps.versions != 1 || ps.reads != 1 {
		t.Fatalf("seen = cached version: %d version reads, %d profile reads; want 1, 1", ps.versions, ps.reads)
	}
	ps.version = 2
	if got := get(2); got != "v2" || ps.reads != 2 {
		t.Fatalf("newer version on the row: %q after %d reads, want v2 after 2", got, ps.reads)
	}
	get(0) // not known with the row: the version is asked
	if ps.versions != 3 {
		t.Fatalf("version reads %d, want 3", ps.versions)
	}
}
