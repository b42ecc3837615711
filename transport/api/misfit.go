package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/contextd/contextd/engine"
)

// The JSON decoder's own errors speak Go ("expected engine.ContextInput",
// `parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00"`, no field). When
// a body does not fit its type, misfit walks the body beside the type and
// names the first value that does not fit, in the API's words and with the
// API's field paths (messages[0].created_at).

const rfc3339Words = "must be an RFC 3339 time, e.g. 2024-05-01T10:00:00Z"

var (
	timeType = reflect.TypeFor[time.Time]()
	// nouns name the objects a client sends, for "must be an array of
	// messages" rather than "of objects".
	nouns = map[reflect.Type]string{reflect.TypeFor[engine.InMessage](): "message"}
	// timeFields are strings the engine parses as times: a value of the
	// wrong JSON type is told the format, not just "a string".
	timeFields = map[string]bool{"since": true, "until": true}
)

// misfit returns the error for the first value of body that does not fit
// t, or nil when every value fits (the decoder failed for another reason).
func misfit(t reflect.Type, body []byte) *apiError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if _, ok := v.(map[string]any); !ok && t.Kind() == reflect.Struct {
		return badRequest("invalid_type", "", "the request body must be a JSON object, got "+jsonKind(v))
	}
	return walk(t, v, "", "")
}

func misfitAt(path, msg string) *apiError {
	code := "invalid_type"
	switch msg {
	case rfc3339Words:
		code = "invalid_time"
	case outOfRange: // the right type, a value beyond its range
		code = "invalid_value"
	}
	return badRequest(code, path, msg)
}

// walk checks v against t; name is the JSON key v came under (for words
// that depend on it). It returns the first misfit, or nil.
func walk(t reflect.Type, v any, path, name string) *apiError {
	if v == nil {
		return nil // null leaves the field unset
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		if s, ok := v.(string); !ok || !validTime(s) {
			return misfitAt(path, rfc3339Words)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return walkStruct(t, v, path)
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return misfitAt(path, "must be an array of "+plural(t.Elem()))
		}
		for i, x := range list {
			if e := walk(t.Elem(), x, fmt.Sprintf("%s[%d]", path, i), name); e != nil {
				return e
			}
		}
	case reflect.Map:
		if _, ok := v.(map[string]any); !ok {
			return misfitAt(path, "must be an object")
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			if timeFields[name] {
				return misfitAt(path, "must be a string holding an RFC 3339 time, e.g. 2024-05-01T10:00:00Z")
			}
			return misfitAt(path, "must be a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return misfitAt(path, "must be true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if msg := intMisfit(t, v); msg != "" {
			return misfitAt(path, msg)
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return misfitAt(path, "must be a number")
		}
	}
	return nil
}

// walkStruct checks an object's keys in the struct's field order, then
// refuses keys the struct does not have (as the strict decoder does).
func walkStruct(t reflect.Type, v any, path string) *apiError {
	obj, ok := v.(map[string]any)
	if !ok {
		return misfitAt(path, "must be "+article(noun(t)))
	}
	known := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if key == "" || key == "-" {
			continue
		}
		known[key] = true
		x, present := obj[key]
		if !present {
			continue
		}
		if e := walk(f.Type, x, join(path, key), key); e != nil {
			return e
		}
	}
	for _, key := range sortedKeys(obj) {
		if !known[key] {
			return badRequest("unknown_field", join(path, key), fmt.Sprintf("unknown field %q", key))
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

const outOfRange = "is out of range"

// intMisfit: "" when v is an integer that fits t.
func intMisfit(t reflect.Type, v any) string {
	n, ok := v.(json.Number)
	if !ok {
		return "must be an integer"
	}
	i, err := n.Int64()
	if err != nil {
		if f, ferr := n.Float64(); ferr == nil && f == math.Trunc(f) {
			return outOfRange
		}
		return "must be an integer"
	}
	if reflect.New(t).Elem().OverflowInt(i) {
		return outOfRange
	}
	return ""
}

func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func noun(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n, ok := nouns[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array"
	}
	if t == timeType {
		return "time"
	}
	return "object"
}

func plural(t reflect.Type) string { return noun(t) + "s" }

func article(n string) string {
	if strings.ContainsRune("aeiou", rune(n[0])) {
		return "an " + n
	}
	return "a " + n
}

// jsonKind names a decoded JSON value's type for a client.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return "an object"
}
