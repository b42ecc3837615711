package memory

import (
	"reflect"
	"testing"
)

// TestSummaryListsAreEveryList: every []string field of Summary is in
// Lists, once, in field order, so that Normalize, Clone, the packer's
// trimming and the summarisers' caps see a list added later.
func TestSummaryListsAreEveryList(t *testing.T) {
	var s Summary
	var want []any
	v := reflect.ValueOf(&s).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Type() == reflect.TypeOf([]string(nil)) {
			want = append(want, f.Addr().Interface())
		}
	}
	got := s.Lists()
	if len(got) != len(want) {
		t.Fatalf("Lists has %d lists, Summary %d", len(got), len(want))
	}
	for i, l := range got {
		if any(l) != want[i] {
			t.Errorf("Lists()[%d] is not the Summary's list field %d", i, i)
		}
	}
}
