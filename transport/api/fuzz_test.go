package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextd/contextd/engine/enginetest"
	"github.com/contextd/contextd/store/sqlite"
)

// FuzzRequestDecoders sends arbitrary bodies to every JSON endpoint: no
// body may cause a 5xx, and every answer is JSON (errors in the one shape).
func FuzzRequestDecoders(f *testing.F) {
	for _, s := range []string{
		`{"chat_id":"c1","query":"hi","budget_tokens":100}`,
		`{"messages":[{"role":"user","content":"x"}]}`,
		`{"query":"q","k":3}`,
		`{"chat_id":"c1","append":[{"role":"tool","content":"y","metadata":{"a":[1,2]}}]}`,
		`{"chat_id":"c1","budget_tokens":-1}`,
		"{\"messages\":[{\"role\":\"user\",\"content\":\"a\\u0000b\"}]}",
		`[1,2,3]`, `null`, `{"chat_id":1e400}`, "\xff\xfe", `{"messages":[{"role":"user","content":"x","created_at":"yesterday"}]}`,
	} {
		f.Add(s)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "f.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	h := NewHandler(Deps{Service: enginetest.New(st)})
	paths := []string{"/v1/context", "/v1/chats/c1/messages", "/v1/search"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, p := range paths {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", p, strings.NewReader(body))
			req.Host = "localhost" // httptest's example.com is not a name of this server (checkHost)
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 && rec.Code != 503 {
				t.Fatalf("POST %s %q → %d %s", p, body, rec.Code, rec.Body.String())
			}
			var v map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatalf("POST %s %q → non-JSON answer %q", p, body, rec.Body.String())
			}
			if rec.Code >= 400 {
				e, ok := v["error"].(map[string]any)
				if !ok || e["code"] == "" || e["message"] == "" {
					t.Fatalf("POST %s → %d without the error shape: %s", p, rec.Code, rec.Body.String())
				}
			}
		}
	})
}
