package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// schema is a tool's input schema, written by hand rather than inferred
// from the Go types: inference turns every pointer and slice into a
// ["null", ...] type union, which generic MCP clients (the Inspector CLI
// among them) cannot fill in. Here every property has one plain type, an
// optional one is simply not required, and the same schema that is
// published is the one arguments are checked against.
type schema = map[string]any

func str(desc string, enum ...string) schema {
	s := schema{"type": "string", "description": desc}
	if len(enum) > 0 {
		s["enum"] = enum
	}
	return s
}

func integer(desc string) schema { return schema{"type": "integer", "description": desc} }

func number(desc string) schema { return schema{"type": "number", "description": desc} }

func array(desc string, items schema) schema {
	return schema{"type": "array", "description": desc, "items": items}
}

// obj is a closed object schema: like the HTTP API, an unknown
// argument is an error, not silently ignored.
func obj(props map[string]schema, required ...string) schema {
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// check validates v against s and names the first argument that breaks
// it, in the HTTP API's error codes and field paths (messages[0].content).
func check(s schema, v any, path string) *toolError {
	bad := func(code, format string, args ...any) *toolError {
		return &toolError{Code: code, Field: path, Message: fmt.Sprintf(format, args...)}
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return bad("invalid_type", "expected an object, got %s", jsonType(v))
		}
		return checkObject(s, m, path)
	case "array":
		a, ok := v.([]any)
		if !ok {
			return bad("invalid_type", "expected an array, got %s", jsonType(v))
		}
		items, _ := s["items"].(schema)
		for i, e := range a {
			if err := check(items, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case "string":
		// An enum is published for clients but checked by the engine, so
		// a value outside it gets the API's own code (invalid_role, ...).
		if _, ok := v.(string); !ok {
			return bad("invalid_type", "expected a string, got %s", jsonType(v))
		}
	case "integer":
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) {
			return bad("invalid_type", "expected an integer, got %s", jsonType(v))
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return bad("invalid_type", "expected a number, got %s", jsonType(v))
		}
	}
	return nil
}

func checkObject(s schema, m map[string]any, path string) *toolError {
	props, _ := s["properties"].(map[string]schema)
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	if req, ok := s["required"].([]string); ok {
		for _, k := range req {
			if _, ok := m[k]; !ok {
				return &toolError{Code: "missing_field", Field: join(k), Message: "is required"}
			}
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same error for the same arguments
	for _, k := range keys {
		p, ok := props[k]
		if !ok {
			return &toolError{Code: "unknown_field", Field: join(k), Message: fmt.Sprintf("unknown argument %q", k)}
		}
		if err := check(p, m[k], join(k)); err != nil {
			return err
		}
	}
	return nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		if x == math.Trunc(x) {
			return "an integer"
		}
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// handlerFor is a tool's handler, given arguments already checked against
// the tool's schema and decoded into In. It returns the text result and
// the structured content (the HTTP API's JSON answer).
type handlerFor[In any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error)

// addTool registers a tool whose every failure, bad arguments included,
// is a tool error whose text is the API's {"error":{...}} JSON.
func addTool[In any](s *mcp.Server, t *mcp.Tool, in schema, h handlerFor[In]) {
	t.InputSchema = in
	t.OutputSchema = schema{"type": "object"}
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := bytes.TrimSpace(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			return errorResult(toolError{Code: "invalid_json", Message: "the arguments are not valid JSON: " + err.Error()}), nil
		}
		if te := check(in, v, ""); te != nil {
			return errorResult(*te), nil
		}
		var typed In
		if err := json.Unmarshal(args, &typed); err != nil {
			return errorResult(toolError{Code: "invalid_type", Message: err.Error()}), nil
		}
		res, out, err := h(toolContext(ctx, req), req, typed)
		if err != nil {
			return errorResult(asToolError(err)), nil
		}
		if out != nil {
			res.StructuredContent = out
		}
		return res, nil
	})
}

func errorResult(e toolError) *mcp.CallToolResult {
	var r mcp.CallToolResult
	r.SetError(e)
	return &r
}
