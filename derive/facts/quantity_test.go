package facts

import "testing"

func TestSaysOtherQuantity(t *testing.T) {
	bump, _ := DetectUpdate("Bump the timeout to 30s.")
	if !MovedQuantity(bump) {
		t.Fatalf("%+v: not a moved quantity", bump)
	}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"our httpx timeout for the ledger call is set to 10s too.", true},
		{"a 15 seconds timeout with 3 retries and exponential backoff.", true},
		{"the timeout is 30s now.", false},                    // the new value
		{"the timeout error came back 3 times today.", false}, // another unit
		{"we hit a timeout again.", false},                    // no amount
		{"the retry waits 10s; the deploy is fine.", false},   // another thing
	} {
		if got := SaysOtherQuantity(bump, tc.text); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
	}
	for _, s := range []string{"Moved dinner to 8.", "We changed the step size h to 0.25.", "I moved to Denver."} {
		if u, _ := DetectUpdate(s); MovedQuantity(u) {
			t.Errorf("%q: %+v is no quantity with a unit", s, u)
		}
	}
}
