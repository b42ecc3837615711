package memory

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Merging summaries: the extractive and LLM summarisers and the episode
// tree cap and merge lists the same way. Lists keep the most recent last: an
// item seen again moves to the end.

// MaxItemChars caps one list item or entity's details.
const MaxItemChars = 200

// EntityTypeName is the generic type of a proper name of unknown kind; a
// merge replaces it with a more specific type when one comes.
const EntityTypeName = "name"

// Clone returns a deep copy of s (its lists are not shared).
func (s Summary) Clone() Summary {
	c := s
	c.Entities = append([]Entity(nil), s.Entities...)
	for _, l := range c.Lists() {
		*l = append([]string(nil), *l...)
	}
	return c
}

// MergeList appends add to prev, de-duplicating case-insensitively (an item
// seen again moves to the end: it is recent again) and keeping the last max
// items (max <= 0: no cap).
func MergeList(prev, add []string, max int) []string {
	var out []string
	index := map[string]int{}
	push := func(item string) {
		item = strings.TrimSpace(item)
		k := normKey(item)
		if k == "" {
			return
		}
		if i, ok := index[k]; ok {
			out = append(out[:i], out[i+1:]...)
			for kk, j := range index {
				if j > i {
					index[kk] = j - 1
				}
			}
		}
		index[k] = len(out)
		out = append(out, item)
	}
	for _, it := range prev {
		push(it)
	}
	for _, it := range add {
		push(it)
	}
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// EntityKey is an entity's identity: its name lower-cased, without a
// possessive or end punctuation, each word's plural "s" folded, so
// "Tokyo's", "tokyo" and "Tokyo." are one entity, "Casa Amoras" and
// "Casa Amora" too.
func EntityKey(name string) string {
	ws := strings.Fields(strings.ToLower(name))
	for i, w := range ws {
		w = strings.TrimRight(w, ".!?…;:,")
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		ws[i] = w
	}
	return strings.Join(ws, " ")
}

// MergeEntities merges entity lists by name (EntityKey). An entity seen
// again moves to the end; its type is kept unless it was generic, and new
// details are added when they say something the old ones did not. A name
// said in full and in part ("Jana Keller", "Jana") is one entity, under
// its fuller name (SameEntity).
func MergeEntities(prev, add []Entity, max int) []Entity {
	var out []Entity
	var keys []string // EntityKey of each of out, computed once (it was per pair)
	for _, e := range append(append([]Entity(nil), prev...), add...) {
		e.Name = strings.Join(strings.Fields(e.Name), " ")
		if e.Name == "" {
			continue
		}
		k := EntityKey(e.Name)
		found := SameEntity(keys, k)
		if found >= 0 {
			old := out[found]
			if len(keys[found]) > len(k) { // the fuller name stays
				e.Name, k = old.Name, keys[found]
			}
			out = append(out[:found], out[found+1:]...)
			keys = append(keys[:found], keys[found+1:]...)
			if old.Type != "" && old.Type != EntityTypeName {
				e.Type = old.Type
			} else if e.Type == "" {
				e.Type = old.Type
			}
			e.Details = mergeDetails(old.Details, e.Details)
		}
		out = append(out, e)
		keys = append(keys, k)
	}
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	if out == nil {
		out = []Entity{}
	}
	return out
}

// SameEntity is the index of the key in keys (EntityKey) that names what
// k names: k itself, or a name k is a whole-word part of, or one that is
// a part of k ("ghost" of "brooks ghost"; "go" is no part of "gorilla");
// -1 when none.
func SameEntity(keys []string, k string) int {
	if i := slices.Index(keys, k); i >= 0 {
		return i
	}
	for j, o := range keys {
		if strings.Contains(" "+o+" ", " "+k+" ") || strings.Contains(" "+k+" ", " "+o+" ") {
			return j
		}
	}
	return -1
}

// mergeDetails adds the new details to the old as one more "; " clause
// and, past 2*MaxItemChars, drops the oldest clauses whole: details never
// pile up cut clauses or ellipses.
func mergeDetails(old, add string) string {
	old, add = strings.TrimSpace(old), strings.TrimSpace(add)
	switch {
	case add == "" || strings.Contains(strings.ToLower(old), strings.ToLower(add)):
		return old
	case old == "" || strings.Contains(strings.ToLower(add), strings.ToLower(old)):
		return clipItem(add, 2*MaxItemChars)
	}
	parts := append(strings.Split(old, "; "), add)
	for len(parts) > 1 && len(strings.Join(parts, "; ")) > 2*MaxItemChars {
		parts = parts[1:]
	}
	return clipItem(strings.Join(parts, "; "), 2*MaxItemChars)
}

// normKey is the case- and space-insensitive key items are merged by.
func normKey(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".!?…;:, ")
}

// clipItem collapses spaces and cuts s to about max bytes, at a word
// boundary when one is near, marking the cut with one "…" (a trailing
// ellipsis is not doubled).
func clipItem(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	s = strings.TrimRight(s, "…. ")
	cut := s[:max]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:…") + "…"
}
