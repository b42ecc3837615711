package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxBatch bounds a JSON-RPC batch under the protocol versions that still
// have them (2025-03-26 and before): each call of a batch runs and its
// answer is held until all are done, so an unbounded batch is unbounded
// work and memory for one request.
const maxBatch = 16

// noBatches is the first protocol version without JSON-RPC batching.
const noBatches = "2025-06-18"

// batchRefusal is why body may not be served as a batch under protocol
// version (the session's, else the request's header), "" when it may: not
// a batch at all, or a small one under a version that has batches. The
// SDK refuses batches only when the request's own version header says
// 2025-06-18 or later; without the header it assumes 2025-03-26 whatever
// the session negotiated, and runs a batch of any length.
func batchRefusal(body []byte, version string) string {
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 || b[0] != '[' {
		return ""
	}
	if version == "" || version >= noBatches {
		return fmt.Sprintf("JSON-RPC batches are not part of MCP since %s (this session's version: %q); send one message per request", noBatches, version)
	}
	if n := batchLen(b, maxBatch+1); n > maxBatch {
		return fmt.Sprintf("a JSON-RPC batch of more than %d messages; send at most %d at once", maxBatch, maxBatch)
	}
	return ""
}

// batchLen counts a JSON array's elements, up to most.
func batchLen(b []byte, most int) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return 0
	}
	n := 0
	for n < most && dec.More() {
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
		n++
	}
	return n
}

// initProtocol is the version an initialize request in body will get: the
// one it asks for when the SDK supports it, else the SDK's newest (which
// has no batches either).
func initProtocol(body []byte) string {
	var req struct {
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	supported := mcp.SupportedProtocolVersions()
	if json.Unmarshal(body, &req) == nil && slices.Contains(supported, req.Params.ProtocolVersion) {
		return req.Params.ProtocolVersion
	}
	return supported[0]
}

// rpcError answers a request with a JSON-RPC error of no id (the request's
// messages were not read one by one).
func rpcError(w http.ResponseWriter, status, code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
