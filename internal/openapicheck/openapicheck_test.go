package openapicheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tiny = `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /x/{id}:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/X"}
        "204": {description: none}
    post:
      requestBody:
        content:
          application/json:
            schema: {type: object, required: [a], properties: {a: {type: integer, minimum: 1}}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {odd: {type: string, maxLength: 3}}}
components:
  schemas:
    X:
      type: object
      additionalProperties: false
      required: [n, at, kind, maybe]
      properties:
        n: {type: integer}
        at: {type: string, format: date-time}
        kind: {enum: [a, b]}
        maybe: {oneOf: [{type: string}, {type: "null"}]}
        list: {type: array, items: {type: number}}
`

func load(t *testing.T) *Spec {
	t.Helper()
	p := filepath.Join(t.TempDir(), "o.yaml")
	if err := os.WriteFile(p, []byte(tiny), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheck(t *testing.T) {
	s := load(t)
	if got := strings.Join(s.Operations(), ","); got != "GET /x/{id},POST /x/{id}" {
		t.Fatalf("operations: %s", got)
	}
	good := `{"n":1,"at":"2026-01-02T03:04:05.5Z","kind":"a","maybe":null,"list":[1,2.5]}`
	if err := s.CheckResponse("GET", "/x/{id}", 200, "application/json; charset=utf-8", []byte(good)); err != nil {
		t.Fatalf("a fitting answer: %v", err)
	}
	for name, tc := range map[string]struct {
		status      int
		ct, body    string
		wantErrPart string
	}{
		"extra field":     {200, "application/json", `{"n":1,"at":"2026-01-02T03:04:05Z","kind":"a","maybe":"x","extra":1}`, `"extra" is not documented`},
		"missing":         {200, "application/json", `{"n":1,"at":"2026-01-02T03:04:05Z","kind":"a"}`, `required "maybe"`},
		"not an integer":  {200, "application/json", `{"n":1.5,"at":"2026-01-02T03:04:05Z","kind":"a","maybe":null}`, "not of type integer"},
		"bad time":        {200, "application/json", `{"n":1,"at":"yesterday","kind":"a","maybe":null}`, "RFC 3339"},
		"enum":            {200, "application/json", `{"n":1,"at":"2026-01-02T03:04:05Z","kind":"c","maybe":null}`, "not one of"},
		"oneOf":           {200, "application/json", `{"n":1,"at":"2026-01-02T03:04:05Z","kind":"a","maybe":3}`, "fits 0 of oneOf"},
		"items":           {200, "application/json", `{"n":1,"at":"2026-01-02T03:04:05Z","kind":"a","maybe":null,"list":["x"]}`, "$.list[0]"},
		"status":          {404, "application/json", `{}`, "status 404 is not documented"},
		"content type":    {200, "text/html", `<p>`, "text/html is not documented"},
		"body on no-body": {204, "", `{}`, "without a body"},
		"not json":        {200, "application/json", `{`, "not JSON"},
	} {
		err := s.CheckResponse("GET", "/x/{id}", tc.status, tc.ct, []byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.wantErrPart) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.wantErrPart)
		}
	}
	if err := s.CheckRequest("POST", "/x/{id}", []byte(`{"a":0}`)); err == nil || !strings.Contains(err.Error(), "below") {
		t.Errorf("request below minimum: %v", err)
	}
	// A keyword the checker does not know is an error, not a pass.
	if err := s.CheckResponse("POST", "/x/{id}", 200, "application/json", []byte(`{"odd":"abcdef"}`)); err == nil || !strings.Contains(err.Error(), "maxLength") {
		t.Errorf("unsupported keyword: %v", err)
	}
}
