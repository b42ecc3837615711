// Package prosetest holds the chats the analysis packages (prose, facts,
// extractive) are benchmarked and golden-checked on: the load generator's
// turns, long technical turns (code, LaTeX, markdown: what BEAM-like chats
// hold) and, when the file is there, the LoCoMo conversations. Tests only.
package prosetest

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/loadgen"
	"github.com/contextd/contextd/memory"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchChats are the load generator's turns (seed 1): what make
// bench-http's chats hold.
func BenchChats(chats, turns int) [][]memory.Message {
	c := loadgen.Corpus{Seed: 1}
	out := make([][]memory.Message, chats)
	for i := range out {
		for t := range turns {
			out[i] = append(out[i], memory.Message{Seq: int64(t + 1), Role: memory.Role(c.Role(t)), Content: c.Turn(i, t), CreatedAt: t0.Add(time.Duration(t) * time.Minute)})
		}
	}
	return out
}

//go:embed longturns.txt
var longTurns string

// LongChats are a few chats with long technical assistant turns (code
// fences, LaTeX, tables, lists, links), parsed from longturns.txt: a line
// "@@ chat NAME" starts a chat, "@@ user" or "@@ assistant" a turn.
func LongChats() [][]memory.Message {
	var out [][]memory.Message
	var body []string
	flush := func() {
		if n := len(out); n > 0 && len(out[n-1]) > 0 {
			m := &out[n-1][len(out[n-1])-1]
			m.Content = strings.TrimSpace(strings.Join(body, "\n"))
		}
		body = nil
	}
	for _, line := range strings.Split(longTurns, "\n") {
		switch {
		case strings.HasPrefix(line, "@@ chat "):
			flush()
			out = append(out, nil)
		case line == "@@ user" || line == "@@ assistant":
			flush()
			n := len(out) - 1
			seq := int64(len(out[n]) + 1)
			out[n] = append(out[n], memory.Message{Seq: seq, Role: memory.Role(line[3:]), CreatedAt: t0.Add(time.Duration(seq) * time.Minute)})
		default:
			body = append(body, line)
		}
	}
	flush()
	return out
}

// LoCoMo returns the LoCoMo sessions as chats (the first speaker is the
// user, the other the assistant, each turn prefixed "Name: ", as the facts
// recall test reads them), or skips tb when the file is absent: its
// license keeps it out of the repository. CONTEXTD_LOCOMO names the file,
// else it is looked for as shared/bench/locomo/locomo-dev.json in the
// parents of the working directory.
func LoCoMo(tb testing.TB) [][]memory.Message {
	tb.Helper()
	path := LoCoMoPath()
	if path == "" {
		tb.Skip("no LoCoMo file (set CONTEXTD_LOCOMO)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read %s: %v", path, err)
	}
	var raw []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		tb.Fatalf("parse %s: %v", path, err)
	}
	var out [][]memory.Message
	for _, r := range raw {
		var ns []int
		for k := range r.Conversation {
			if n, err := strconv.Atoi(strings.TrimPrefix(k, "session_")); err == nil && strings.HasPrefix(k, "session_") {
				ns = append(ns, n)
			}
		}
		sort.Ints(ns)
		for _, n := range ns {
			var turns []struct {
				Speaker     string `json:"speaker"`
				Text        string `json:"text"`
				BlipCaption string `json:"blip_caption"`
			}
			if err := json.Unmarshal(r.Conversation[fmt.Sprintf("session_%d", n)], &turns); err != nil || len(turns) == 0 {
				continue
			}
			var chat []memory.Message
			for i, t := range turns {
				role := memory.RoleAssistant
				if t.Speaker == turns[0].Speaker {
					role = memory.RoleUser
				}
				text := t.Speaker + ": " + t.Text
				if t.BlipCaption != "" {
					text += " [shares " + t.BlipCaption + "]"
				}
				chat = append(chat, memory.Message{Seq: int64(i + 1), Role: role, Content: text, CreatedAt: t0})
			}
			out = append(out, chat)
		}
	}
	return out
}

// LoCoMoPath is the LoCoMo dev file: CONTEXTD_LOCOMO, else
// shared/bench/locomo/locomo-dev.json in the parents of the working
// directory ("": not found).
func LoCoMoPath() string {
	if p := os.Getenv("CONTEXTD_LOCOMO"); p != "" {
		return p
	}
	dir, _ := os.Getwd()
	for i := 0; i < 6 && dir != "/"; i++ {
		p := filepath.Join(dir, "shared", "bench", "locomo", "locomo-dev.json")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// ReportCPU runs op b.N times and reports, besides ns/op, the process's
// CPU time per op (cpu-ns/op, GC included): on a machine shared with other
// work the wall clock says more about the neighbours than about the code.
func ReportCPU(b *testing.B, op func(i int)) {
	b.Helper()
	start, ok := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op(i)
	}
	b.StopTimer()
	if end, ok2 := cpuTime(); ok && ok2 {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// CheckGolden compares got with testdata/golden/name, first rewriting the
// file when update is set (-update). The analysis packages' golden files
// were computed on the regular-expression code before hand-written
// scanners replaced it: a speed-up must not change a byte.
func CheckGolden(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) == string(want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			t.Fatalf("%s differs at line %d:\n got %s\nwant %s", name, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s differs: %d lines, want %d", name, len(gl), len(wl))
}

// CheckGoldenHash is CheckGolden on the hex SHA-256 of got: for text that
// stays outside the repository (LoCoMo) or is too large to keep.
func CheckGoldenHash(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	sum := sha256.Sum256(got)
	CheckGolden(t, name, []byte(hex.EncodeToString(sum[:])+"\n"), update)
}
