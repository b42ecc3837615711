package extractive

import (
	"strconv"
	"strings"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/memory"
)

// currentDetails drops the parts of entities' details ("; "-joined) that a
// later fact of this batch updates, as current does for preferences: after
// "moved dinner to 8", "Taberna (name): … dinner at 19:30, table for 4."
// would show the old time as the place's detail. from[i] is the turn entity
// i's details come from; without it (an earlier summary's entities) they
// are older than every fact. An entity whose details all went stays, named.
func currentDetails(es []memory.Entity, from []memory.Message, fs []memory.Fact) []memory.Entity {
	if fs = pointed(fs); len(es) == 0 || len(fs) == 0 {
		return es
	}
	var old []memory.Fact
	for i, e := range es {
		for j, part := range detailParts(e.Details) {
			f := memory.Fact{ID: "detail:" + strconv.Itoa(i) + ":" + strconv.Itoa(j), Kind: memory.FactOther, Text: part}
			if i < len(from) {
				f.Seqs, f.ValidAt = []int64{from[i].Seq}, from[i].CreatedAt
			}
			old = append(old, f)
		}
	}
	gone := facts.Supersede(old, fs)
	if len(gone) == 0 {
		return es
	}
	newer := map[string]int64{}
	for _, f := range fs {
		newer[f.ID] = f.FirstSeq()
	}
	out := make([]memory.Entity, len(es))
	k := 0
	for i, e := range es {
		var keep []string
		for _, part := range detailParts(e.Details) {
			by, stale := gone[old[k].ID]
			// Only a later turn updates: a fact of the detail's own turn
			// restates it.
			if !stale || (i < len(from) && newer[by] <= from[i].Seq) {
				keep = append(keep, part)
			}
			k++
		}
		e.Details = strings.Join(keep, "; ")
		out[i] = e
	}
	return out
}

func detailParts(d string) []string {
	if strings.TrimSpace(d) == "" {
		return nil
	}
	return strings.Split(d, "; ")
}

// pointed keeps the facts that can say a detail is stale: one holding a
// slot (where someone lives, an age, a planned date), or stating an update
// that names its old value, moves a time, or names its thing in two words
// or more. A detail is any sentence around a name, and an update naming
// its thing by one word alone ("the address is correct now", "our
// connection is only 50 minutes now") would make stale every one holding
// the word, the new address among them.
func pointed(fs []memory.Fact) []memory.Fact {
	var out []memory.Fact
	for _, f := range fs {
		u, ok := facts.DetectUpdate(f.Text)
		if len(facts.Slots(f)) > 0 || ok && (len(u.Old) > 0 || facts.MovedTime(u) || len(u.Subject) >= 2) {
			out = append(out, f)
		}
	}
	return out
}
