package memory

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A current fact's superseded_by is null on the wire; a superseded one's
// is the newer fact's id; both read back as they were.
func TestFactJSONSupersededBy(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		by, want string
	}{{"", `"superseded_by":null`}, {"f2", `"superseded_by":"f2"`}} {
		f := Fact{ID: "f1", ChatID: "c", Text: "x", Seqs: []int64{1}, ValidAt: at, Kind: FactOther, SupersededBy: tc.by, CreatedAt: at}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.want) || strings.Count(string(b), "superseded_by") != 1 {
			t.Errorf("%+v as JSON: %s, want %s once", f, b, tc.want)
		}
		var back Fact
		if err := json.Unmarshal(b, &back); err != nil || back.SupersededBy != tc.by || back.ID != "f1" || !back.ValidAt.Equal(at) {
			t.Errorf("read back %+v (%v), want superseded_by %q", back, err, tc.by)
		}
	}
}
