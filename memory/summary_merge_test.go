package memory

import (
	"strconv"
	"strings"
	"testing"
)

func TestMergeDetailsNoEllipsisPileUp(t *testing.T) {
	var ents []Entity
	for i := 0; i < 40; i++ {
		ents = MergeEntities(ents, []Entity{{Name: "Acme", Type: "organization", Details: strings.Repeat("word ", 10) + "detail number " + strconv.Itoa(i) + " is here"}}, 0)
	}
	d := ents[0].Details
	if len(d) > 2*MaxItemChars || strings.Contains(d, "…") || !strings.HasSuffix(d, "detail number 39 is here") {
		t.Fatalf("details %q (%d bytes)", d, len(d))
	}
	// A single detail too long is cut once, at a word.
	long := MergeEntities(nil, []Entity{{Name: "B", Details: strings.Repeat("abcdefghi ", 60) + "…"}}, 0)
	long = MergeEntities(long, []Entity{{Name: "B", Details: "more"}}, 0)
	if n := strings.Count(long[0].Details, "…"); n > 1 || len(long[0].Details) > 2*MaxItemChars+len("…") {
		t.Fatalf("details %q", long[0].Details)
	}
}

func TestEntityKey(t *testing.T) {
	cases := []struct{ a, b string }{
		{"Tokyo", "TOKYO"},
		{"Tokyo's", "tokyo"},
		{"Casa Amoras", "casa amora"},
		{"Lisbon.", "Lisbon"},
		{"Maria  Silva", "maria silva"},
	}
	for _, c := range cases {
		if EntityKey(c.a) != EntityKey(c.b) {
			t.Errorf("EntityKey(%q) = %q, EntityKey(%q) = %q: want one key", c.a, EntityKey(c.a), c.b, EntityKey(c.b))
		}
	}
	if EntityKey("Kyoto") == EntityKey("Tokyo") || EntityKey("Glass") == EntityKey("Glas") {
		t.Error("different names share a key")
	}
}

// A name said in full and in part, in one list or across two, is one
// entity under its fuller name; a word inside another word is not a part.
func TestMergeEntitiesByPartOfName(t *testing.T) {
	got := MergeEntities(
		[]Entity{{Name: "Jana", Type: "person", Details: "my friend Jana"}, {Name: "Go", Type: "name"}},
		[]Entity{{Name: "Jana Keller", Type: "name", Details: "Jana Keller's address"}, {Name: "Gorilla Glass", Type: "name"}}, 0)
	var names []string
	for _, e := range got {
		names = append(names, e.Name+"/"+e.Type)
	}
	if want := "Go/name|Jana Keller/person|Gorilla Glass/name"; strings.Join(names, "|") != want {
		t.Errorf("merged %q, want %q", strings.Join(names, "|"), want)
	}
	again := MergeEntities(got, []Entity{{Name: "Jana", Details: "Jana again"}}, 0)
	if n := again[len(again)-1].Name; len(again) != 3 || n != "Jana Keller" {
		t.Errorf("after Jana again: %+v", again)
	}
}
