package memory_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

func TestParseDumpLineRejects(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"not JSON", `{"type":"chat",`, "not a JSON object"},
		{"no tenant", `{"type":"chat","chat_id":"c"}`, `"tenant" is missing`},
		{"unknown type", `{"type":"vector","tenant":"t"}`, `unknown type "vector"`},
		{"unknown field", `{"type":"chat","tenant":"t","chat_id":"c","colour":"red"}`, `unknown field "colour"`},
		{"wrong field type", `{"type":"message","tenant":"t","chat_id":"c","id":"m","seq":"one","role":"user"}`, "seq"},
		{"no chat id", `{"type":"message","tenant":"t","id":"m","seq":1,"role":"user"}`, `"chat_id" is missing`},
		{"no message id", `{"type":"message","tenant":"t","chat_id":"c","seq":1,"role":"user"}`, `"id" is missing`},
		{"seq 0", `{"type":"message","tenant":"t","chat_id":"c","id":"m","seq":0,"role":"user"}`, `"seq" must be`},
		{"bad role", `{"type":"message","tenant":"t","chat_id":"c","id":"m","seq":1,"role":"robot"}`, `role "robot"`},
		{"episode range", `{"type":"episode","tenant":"t","chat_id":"c","id":"e","from_seq":5,"to_seq":4}`, "range"},
		{"fact without seqs", `{"type":"fact","tenant":"t","chat_id":"c","id":"f","text":"x"}`, `"seqs"`},
		{"profile without user", `{"type":"profile","tenant":"t"}`, `"user_id" is missing`},
		{"two values", `{"type":"chat","tenant":"t","chat_id":"c"} {}`, "after top-level value"},
		// Ids the API would refuse, and so could never read or erase.
		{"blank chat id", `{"type":"chat","tenant":"t","chat_id":"   "}`, `"chat_id" is blank`},
		{"long chat id", `{"type":"chat","tenant":"t","chat_id":"` + strings.Repeat("c", 300) + `"}`, `"chat_id" is longer than 256 bytes`},
		{"tenant with a space", `{"type":"chat","tenant":"a b","chat_id":"c"}`, `"tenant" must not contain spaces`},
		{"control in a message id", `{"type":"message","tenant":"t","chat_id":"c","id":"m\u0007","seq":1,"role":"user"}`, `"id" contains control characters`},
		{"blank user of a chat", `{"type":"chat","tenant":"t","chat_id":"c","user_id":" "}`, `"user_id" is blank`},
	}
	for _, tc := range tests {
		_, err := memory.ParseDumpLine([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// Every record type survives its line: marshal, parse, marshal again.
func TestDumpLineRoundTrip(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)
	parent := "p"
	st := memory.ProfileState{Profile: memory.Profile{UserID: "ann", Topics: []memory.ProfileItem{{ID: "t1", Text: "tea",
		Sources: []memory.Source{{ChatID: "c", FromSeq: 1, ToSeq: 2}}, Confirmed: at}}}, Forgotten: map[string][]string{"x": {"c"}}}
	recs := []memory.DumpRecord{
		{Type: memory.DumpChat, Tenant: "t", ChatID: "c", Chat: &memory.Chat{Tenant: "t", ID: "c", UserID: "ann", Agent: "a", LastSeq: 2, CreatedAt: at, SummaryDirty: true}},
		{Type: memory.DumpMessage, Tenant: "t", ChatID: "c", Message: &memory.Message{ID: "m", Seq: 1, Role: memory.RoleUser, Content: "hi", CreatedAt: at, Metadata: map[string]any{"k": "v", "id": json.Number("1234567890123456789")}}},
		{Type: memory.DumpMessage, Tenant: "t", ChatID: "c", Message: &memory.Message{ID: "d", Seq: 2, Role: memory.RoleUser, CreatedAt: at, Deleted: true}},
		{Type: memory.DumpSummaryRecord, Tenant: "t", ChatID: "c", Summary: &memory.SummaryRecord{ID: "s", ParentID: &parent, Depth: 1, Summary: memory.Summary{Narrative: "n", CoveredToSeq: 2}}},
		{Type: memory.DumpEpisode, Tenant: "t", ChatID: "c", Episode: &memory.Episode{ID: "e", ChatID: "c", FromSeq: 1, ToSeq: 2, Short: "s", Rebuild: true}},
		{Type: memory.DumpFact, Tenant: "t", ChatID: "c", Fact: &memory.Fact{ID: "f", ChatID: "c", Text: "x", Seqs: []int64{1, 2}, ValidAt: at, SupersededBy: "g"}},
		{Type: memory.DumpFact, Tenant: "t", ChatID: "c", Fact: &memory.Fact{ID: "f0", ChatID: "c", Text: "y", Seqs: []int64{1}, ValidAt: at}},
		{Type: memory.DumpProfile, Tenant: "t", Profile: &st},
	}
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(line), `{"type":"`+r.Type+`","tenant":"t"`) {
			t.Errorf("line %s does not start with its type and tenant", line)
		}
		back, err := memory.ParseDumpLine(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(line) || back.ChatID != r.ChatID {
			t.Errorf("round trip\n%s\n%s", line, again)
		}
	}
	if _, err := json.Marshal(memory.DumpRecord{Type: memory.DumpChat}); err == nil {
		t.Error("a record without its object marshalled")
	}
}
