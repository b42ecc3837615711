package facts

import (
	"encoding/json"
	"flag"
	"reflect"
	"testing"

	"github.com/contextd/contextd/internal/prose"
	"github.com/contextd/contextd/internal/prose/prosetest"
	"github.com/contextd/contextd/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenFacts are the facts and open questions of each chat.
func goldenFacts(t *testing.T, chats [][]memory.Message) []byte {
	t.Helper()
	type chatFacts struct {
		Facts     []memory.Fact
		Questions []Question
	}
	var out []chatFacts
	for _, turns := range chats {
		fs, qs := ExtractAll(turns)
		out = append(out, chatFacts{fs, qs})
		if !reflect.DeepEqual(fs, Extract(turns)) || !reflect.DeepEqual(qs, Unanswered(turns)) {
			t.Fatalf("ExtractAll differs from Extract and Unanswered on %q…", turns[0].Content)
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestExtractGoldenBench(t *testing.T) {
	prosetest.CheckGolden(t, "bench.json", goldenFacts(t, prosetest.BenchChats(16, 40)), *update)
}

func TestExtractGoldenLong(t *testing.T) {
	prosetest.CheckGolden(t, "long.json", goldenFacts(t, prosetest.LongChats()), *update)
}

// The LoCoMo conversations stay outside the repository: only the hash of
// their facts is kept.
func TestExtractGoldenLoCoMo(t *testing.T) {
	prosetest.CheckGoldenHash(t, "locomo.sha256", goldenFacts(t, prosetest.LoCoMo(t)), *update)
}

// FromReadings skips the turns Extract skips: given every turn read, it
// returns what ExtractAll returns.
func TestFromReadingsSkipsAsExtract(t *testing.T) {
	turns := []memory.Message{
		{Seq: 1, Role: memory.RoleSystem, Content: "I love answering in French."},
		{Seq: 2, Role: memory.RoleUser, Content: "I'm a nurse and I live in Lisbon. Can you plan my trip to Osaka next spring?"},
		{Seq: 3, Role: memory.RoleTool, Content: "We decided to use the cheapest flight on 2025-04-02."},
		{Seq: 4, Role: memory.RoleUser, Content: "I prefer window seats on long flights.", Deleted: true},
		{Seq: 5, Role: memory.RoleAssistant, Content: "Let's go with the morning flight on Friday."},
		{Seq: 6, Role: memory.RoleUser, Content: "What hotel do you suggest near the old castle in Osaka?"},
	}
	var rs []prose.Reading
	for _, m := range turns {
		rs = append(rs, prose.ReadProse(m))
	}
	gotF, gotQ := FromReadings(rs)
	wantF, wantQ := ExtractAll(turns)
	if len(wantF) == 0 || len(wantQ) == 0 {
		t.Fatalf("the case draws %d facts and %d questions: it tests nothing", len(wantF), len(wantQ))
	}
	if !reflect.DeepEqual(gotF, wantF) || !reflect.DeepEqual(gotQ, wantQ) {
		t.Fatalf("FromReadings = %+v, %+v; want %+v, %+v", gotF, gotQ, wantF, wantQ)
	}
}
