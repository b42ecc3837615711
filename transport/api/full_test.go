package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/contextd/contextd/engine"
)

// TestFullAnswer: storage_full is a 503 with a Retry-After (a fault the
// client may retry, not a bug); an error the engine did not map stays 500.
func TestFullAnswer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		code       string
		retryAfter int
	}{
		{"storage full", fmt.Errorf("append: %w", &engine.Error{Kind: engine.KindFull, Code: "storage_full", Message: "full"}),
			http.StatusServiceUnavailable, "storage_full", fullRetryAfter},
		{"backend down", &engine.Error{Kind: engine.KindUnavailable, Code: "backend_unavailable"}, http.StatusServiceUnavailable, "backend_unavailable", 1},
		{"generic", errors.New("boom"), http.StatusInternalServerError, "internal", 0},
	} {
		ae := toAPIError(tc.err)
		if ae.status != tc.status || ae.Code != tc.code || ae.retryAfter != tc.retryAfter {
			t.Errorf("%s: %d %s retry %d, want %d %s retry %d", tc.name, ae.status, ae.Code, ae.retryAfter, tc.status, tc.code, tc.retryAfter)
		}
	}
}
