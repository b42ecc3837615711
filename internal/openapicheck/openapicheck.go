// Package openapicheck reads docs/openapi.yaml and checks answers against
// it: which operations it documents, and whether a status, content type
// and body fit an operation's documented response. The schema check is a
// small subset of JSON Schema (2020-12, as OpenAPI 3.1 uses it): $ref,
// type (one or a list, "null" included), properties, required,
// additionalProperties, items, enum, const, oneOf, anyOf, allOf, minimum,
// maximum, minLength and format date-time. A schema using any other
// keyword is an error, so nothing the document says is silently unchecked.
// Only tests use it.
package openapicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Spec is a loaded OpenAPI document, as JSON values.
type Spec struct {
	doc map[string]any
}

// Load reads an OpenAPI document (YAML or JSON).
func Load(path string) (*Spec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var y any
	if err := yaml.Unmarshal(raw, &y); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Through JSON, so numbers are float64 and maps map[string]any, as an
	// answer decodes.
	j, err := json.Marshal(y)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(j, &doc); err != nil {
		return nil, err
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		return nil, fmt.Errorf("%s: openapi %q, want 3.1.x", path, v)
	}
	return &Spec{doc: doc}, nil
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Operations lists "METHOD /path" for every documented operation, sorted.
func (s *Spec) Operations() []string {
	paths, _ := s.doc["paths"].(map[string]any)
	var out []string
	for p, item := range paths {
		m, _ := item.(map[string]any)
		for _, meth := range methods {
			if _, ok := m[meth]; ok {
				out = append(out, strings.ToUpper(meth)+" "+p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// CheckResponse checks an answer to METHOD path (the documented template,
// e.g. /v1/chats/{chat_id}/messages): its status must be documented for
// the operation, its content type among the documented ones, and its body
// must fit the schema (each line of application/x-ndjson; text/* is not
// checked). A documented response without content must have an empty body.
func (s *Spec) CheckResponse(method, path string, status int, contentType string, body []byte) error {
	op, err := s.operation(method, path)
	if err != nil {
		return err
	}
	responses, _ := op["responses"].(map[string]any)
	r, ok := responses[strconv.Itoa(status)]
	if !ok {
		if r, ok = responses["default"]; !ok {
			return fmt.Errorf("%s %s: status %d is not documented", method, path, status)
		}
	}
	resp, err := s.resolve(r)
	if err != nil {
		return err
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(bytes.TrimSpace(body)) > 0 {
			return fmt.Errorf("%s %s %d: documented without a body, got %.200q", method, path, status, body)
		}
		return nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("%s %s %d: Content-Type %q: %v", method, path, status, contentType, err)
	}
	media, ok := content[mt].(map[string]any)
	if !ok {
		return fmt.Errorf("%s %s %d: Content-Type %s is not documented", method, path, status, mt)
	}
	schema := media["schema"]
	switch {
	case mt == "application/json":
		return s.checkJSON(schema, body, fmt.Sprintf("%s %s %d", method, path, status))
	case mt == "application/x-ndjson":
		for i, line := range bytes.Split(bytes.TrimRight(body, "\n"), []byte("\n")) {
			if err := s.checkJSON(schema, line, fmt.Sprintf("%s %s %d line %d", method, path, status, i+1)); err != nil {
				return err
			}
		}
		return nil
	case strings.HasPrefix(mt, "text/"):
		return nil
	}
	return fmt.Errorf("%s %s %d: no check for %s", method, path, status, mt)
}

// CheckRequest checks a request body against the operation's schema.
func (s *Spec) CheckRequest(method, path string, body []byte) error {
	op, err := s.operation(method, path)
	if err != nil {
		return err
	}
	rb, err := s.resolve(op["requestBody"])
	if err != nil {
		return fmt.Errorf("%s %s: no request body documented", method, path)
	}
	content, _ := rb["content"].(map[string]any)
	media, ok := content["application/json"].(map[string]any)
	if !ok {
		return fmt.Errorf("%s %s: no application/json request body documented", method, path)
	}
	return s.checkJSON(media["schema"], body, method+" "+path+" request")
}

func (s *Spec) operation(method, path string) (map[string]any, error) {
	paths, _ := s.doc["paths"].(map[string]any)
	item, ok := paths[path].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not documented", path)
	}
	op, ok := item[strings.ToLower(method)].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s %s is not documented", method, path)
	}
	return op, nil
}

func (s *Spec) checkJSON(schema any, body []byte, where string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%s: not JSON: %v", where, err)
	}
	if err := s.Validate(schema, v, "$"); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// resolve follows a local $ref ("#/components/...") to the object it names.
func (s *Spec) resolve(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object: %v", v)
	}
	for range 16 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		var cur any = s.doc
		if !strings.HasPrefix(ref, "#/") {
			return nil, fmt.Errorf("$ref %q: only local references are supported", ref)
		}
		for _, part := range strings.Split(ref[2:], "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			obj, _ := cur.(map[string]any)
			if cur, ok = obj[part]; !ok {
				return nil, fmt.Errorf("$ref %q does not resolve", ref)
			}
		}
		if m, ok = cur.(map[string]any); !ok {
			return nil, fmt.Errorf("$ref %q is not an object", ref)
		}
	}
	return nil, fmt.Errorf("$ref chain too long")
}

// keywords are the schema keywords Validate understands or that do not
// constrain a value.
var keywords = map[string]bool{
	"$ref": true, "type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "oneOf": true, "anyOf": true, "allOf": true,
	"minimum": true, "maximum": true, "minLength": true, "format": true,
	"description": true, "title": true, "default": true, "examples": true, "pattern": true,
}

// Validate checks the JSON value v (as encoding/json decodes into any)
// against schema; at names v's place in errors.
func (s *Spec) Validate(schema any, v any, at string) error {
	if b, ok := schema.(bool); ok {
		if !b {
			return fmt.Errorf("%s: no value is allowed here", at)
		}
		return nil
	}
	sc, err := s.resolve(schema)
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	for k := range sc {
		if !keywords[k] {
			return fmt.Errorf("%s: the schema uses %q, which this checker does not support", at, k)
		}
	}
	for _, check := range []func(map[string]any, any, string) error{checkValue, s.checkCombined, s.checkObject, s.checkArray} {
		if err := check(sc, v, at); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks v itself: type, const, enum, a number's bounds, a
// string's length and format.
func checkValue(sc map[string]any, v any, at string) error {
	if t, ok := sc["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, fmt.Sprint(x))
			}
		}
		if !slices.ContainsFunc(types, func(t string) bool { return hasType(v, t) }) {
			return fmt.Errorf("%s: %s is not of type %s", at, brief(v), strings.Join(types, " or "))
		}
	}
	if c, ok := sc["const"]; ok && !reflect.DeepEqual(c, v) {
		return fmt.Errorf("%s: %s, want %v", at, brief(v), c)
	}
	if e, ok := sc["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return reflect.DeepEqual(x, v) }) {
		return fmt.Errorf("%s: %s is not one of %v", at, brief(v), e)
	}
	if n, ok := v.(float64); ok {
		if m, ok := sc["minimum"].(float64); ok && n < m {
			return fmt.Errorf("%s: %v is below %v", at, n, m)
		}
		if m, ok := sc["maximum"].(float64); ok && n > m {
			return fmt.Errorf("%s: %v is above %v", at, n, m)
		}
	}
	if str, ok := v.(string); ok {
		if m, ok := sc["minLength"].(float64); ok && float64(len([]rune(str))) < m {
			return fmt.Errorf("%s: %q is shorter than %v", at, str, m)
		}
		if sc["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				return fmt.Errorf("%s: %q is not an RFC 3339 date-time", at, str)
			}
		}
	}
	return nil
}

// checkCombined checks v against allOf, anyOf and oneOf.
func (s *Spec) checkCombined(sc map[string]any, v any, at string) error {
	if all, ok := sc["allOf"].([]any); ok {
		for _, sub := range all {
			if err := s.Validate(sub, v, at); err != nil {
				return err
			}
		}
	}
	if anyOf, ok := sc["anyOf"].([]any); ok {
		var errs []string
		for _, sub := range anyOf {
			err := s.Validate(sub, v, at)
			if err == nil {
				errs = nil
				break
			}
			errs = append(errs, err.Error())
		}
		if errs != nil {
			return fmt.Errorf("%s: fits none of anyOf: %s", at, strings.Join(errs, "; "))
		}
	}
	if one, ok := sc["oneOf"].([]any); ok {
		fits := 0
		var errs []string
		for _, sub := range one {
			if err := s.Validate(sub, v, at); err != nil {
				errs = append(errs, err.Error())
			} else {
				fits++
			}
		}
		if fits != 1 {
			return fmt.Errorf("%s: fits %d of oneOf's %d schemas, want exactly 1 (%s)", at, fits, len(one), strings.Join(errs, "; "))
		}
	}
	return nil
}

// checkObject checks an object's required and documented properties, in
// key order.
func (s *Spec) checkObject(sc map[string]any, v any, at string) error {
	if obj, ok := v.(map[string]any); ok {
		props, _ := sc["properties"].(map[string]any)
		if req, ok := sc["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[fmt.Sprint(r)]; !ok {
					return fmt.Errorf("%s: required %q is missing", at, r)
				}
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p, ok := props[k]; ok {
				if err := s.Validate(p, obj[k], at+"."+k); err != nil {
					return err
				}
				continue
			}
			if ap, ok := sc["additionalProperties"]; ok {
				if b, isBool := ap.(bool); isBool && !b {
					return fmt.Errorf("%s: %q is not documented", at, k)
				}
				if err := s.Validate(ap, obj[k], at+"."+k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkArray checks an array's items.
func (s *Spec) checkArray(sc map[string]any, v any, at string) error {
	if arr, ok := v.([]any); ok {
		if items, ok := sc["items"]; ok {
			for i, x := range arr {
				if err := s.Validate(items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func hasType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == math.Trunc(n)
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
