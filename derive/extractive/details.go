package extractive

import (
	"slices"
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
// are older than every fact. A stale part gives way to the fact that
// updates it ("Ana moved dinner to 8, same day, same place."): what the
// thing is now.
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
	byID := map[string]memory.Fact{}
	for _, f := range fs {
		byID[f.ID] = f
	}
	out := make([]memory.Entity, len(es))
	k := 0
	for i, e := range es {
		var keep []string
		for _, part := range detailParts(e.Details) {
			by, stale := gone[old[k].ID]
			k++
			// Only a later turn updates: a fact of the detail's own turn
			// restates it.
			if stale && (i >= len(from) || byID[by].FirstSeq() > from[i].Seq) {
				part = clip(byID[by].Text, MaxItemChars) // what it is now
			}
			if !slices.Contains(keep, part) {
				keep = append(keep, part)
			}
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
		if len(facts.Slots(f)) > 0 || ok && (len(u.Old) > 0 || facts.MovedValue(u) || len(u.Subject) >= 2) {
			out = append(out, f)
		}
	}
	return out
}

// replacedDetails gives way, in entities' details, to a user's turn of
// this batch that replaced a choice (facts.DetectReplacement): after "Oakline
// wouldn't put the start date in writing … we're going with Brightwood
// after all", "Oakline (name): I think we go with Oakline" would list the
// old choice as the thing's detail. A part naming what the turn rejected,
// from an earlier turn (from, as in currentDetails), becomes the turn's
// sentence saying the choice changed.
func replacedDetails(es []memory.Entity, from []memory.Message, turns []memory.Message) []memory.Entity {
	var out []memory.Entity
	for _, t := range turns {
		if t.Role != memory.RoleUser {
			continue // an assistant's "instead" is advice, not a choice made
		}
		r, ok := facts.DetectReplacement(t.Content)
		if !ok {
			continue
		}
		if out == nil {
			out = slices.Clone(es)
		}
		for i, e := range out {
			if i < len(from) && from[i].Seq >= t.Seq {
				continue
			}
			if _, ok := r.Replaces(e.Name); !ok {
				continue // "Sandra … says the kings arms function room is upstairs" is still Sandra's, after "scrap the kings arms"
			}
			out[i].Details = replacedParts(e.Details, r)
		}
	}
	if out == nil {
		return es
	}
	return out
}

// replacedParts is details with each part naming what r rejected given
// way to r's sentence saying the choice changed.
func replacedParts(details string, r facts.Replacement) string {
	var keep []string
	for _, part := range detailParts(details) {
		if _, ok := r.Replaces(part); ok {
			part = clip(r.Cue(), MaxItemChars)
		}
		if !slices.Contains(keep, part) {
			keep = append(keep, part)
		}
	}
	return strings.Join(keep, "; ")
}
