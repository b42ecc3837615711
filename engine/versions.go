package engine

import (
	"regexp"
	"slices"
	"strings"

	"github.com/contextd/contextd/internal/lex"
)

// Versions moved on. "we're on python 3.12 now and they put polars 1.9.0
// in it" changed "We're on python 3.10 and polars 0.19.12": a name and
// its dotted version, said again with another version in a sentence of
// change. A version has no value kind (lex.ValueKinds), so a restatement
// does not read it, and the name is what it is the version of: an older
// turn writing the same name before another version states the old one.

// versionChange is the names a turn gives new versions, with them.
type versionChange struct {
	names, versions []string
}

// versionOf is a name and its dotted version ("python 3.12", "polars
// 1.9.0", "node-20.11.1" is left: one token).
var versionOf = regexp.MustCompile(`\b([a-z][a-z0-9_+-]*[a-z]) v?(\d+\.\d+(?:\.\d+)*)\b`)

// versionTo is a name moved to a version by a verb between them
// ("upgraded polars to 1.9.0", "bumped node from 18.19 to 20.11").
var versionTo = regexp.MustCompile(`\b(?:upgraded|bumped|updated|moved|pinned|switched) ([a-z][a-z0-9_+-]*[a-z]) (?:from v?[\d.]+ )?to v?(\d+\.\d+(?:\.\d+)*)\b`)

// notVersioned are the words a dotted number follows that give a measure,
// a place in a text or a price or a time, not a program's version: "the
// 990v5 size 10.5" is another shoe's size than "Ultraboost size 11.5",
// "parking costs 3.20" and "the bus leaves 11.05" name no program.
var notVersioned = lex.Set(`size sizes step steps section chapter page pages figure table item option level grade rating score week
day round part phase stage lesson unit room gate platform row line version km miles mile kg lbs hours hour mins minutes percent
costs cost leaves leave arrives departs takes weighs reads shows gets pays charges starts ends opens closes runs is was are were be
at by to from about around approx approximately only just under over nearly almost roughly`)

// versionsMax bounds the versions one turn gives: more is a lock file or
// a list of options, not a change.
const versionsMax = 4

// versionsIn reads the versions content (a turn) gives anew: in a
// sentence of change (changeWords), not a question.
func versionsIn(content string) (*versionChange, string, bool) {
	if !strings.Contains(content, ".") {
		return nil, "", false
	}
	for _, s := range lex.Sentences(content) {
		low := strings.ToLower(s)
		if strings.Contains(low, "?") || !dotted(low) || !saysChange(low) || additive(low) {
			continue // "now it also crashes on iOS 17.4": one more, not another
		}
		var vc versionChange
		twice := map[string]bool{}
		for _, m := range append(versionTo.FindAllStringSubmatch(low, -1), versionOf.FindAllStringSubmatch(low, -1)...) {
			if lex.IsRankStopword(m[1]) || notVersioned[m[1]] {
				continue // "is 3.12", "to 1.9.0": no name; "size 10.5": a measure; "costs 3.20": a verb
			}
			if i := slices.Index(vc.names, m[1]); i >= 0 {
				twice[m[1]] = twice[m[1]] || vc.versions[i] != m[2]
				continue
			}
			vc.names, vc.versions = append(vc.names, m[1]), append(vc.versions, m[2])
		}
		for i := len(vc.names) - 1; i >= 0; i-- {
			if twice[vc.names[i]] { // "switched python 3.11 to default but the tutorial uses python 3.10": both said
				vc.names, vc.versions = slices.Delete(vc.names, i, i+1), slices.Delete(vc.versions, i, i+1)
			}
		}
		if len(vc.names) == 0 || len(vc.names) > versionsMax {
			continue
		}
		return &vc, s, true
	}
	return nil, "", false
}

// saysChange: a sentence (lower case) holds a word of change.
func saysChange(low string) bool {
	for _, c := range changeWords {
		if lex.HasPhrase(low, c) {
			return true
		}
	}
	return lex.HasPhrase(low, "upgraded") || lex.HasPhrase(low, "bumped") || lex.HasPhrase(low, "migrated")
}

// changes: an older turn (lower case) writes one of the names before
// another version, and never before the new one.
func (v *versionChange) changes(low string) bool {
	if !dotted(low) {
		return false
	}
	stale := false
	for _, m := range versionOf.FindAllStringSubmatch(low, -1) {
		for i, n := range v.names {
			if m[1] != n {
				continue
			}
			if m[2] == v.versions[i] {
				return false // it says the new version too: a comparison, or already current
			}
			stale = true
		}
	}
	return stale
}

// dotted: s holds a digit, a dot and a digit ("3.12"): a cheap first look
// before the patterns.
func dotted(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == '.' && s[i-1] >= '0' && s[i-1] <= '9' && s[i+1] >= '0' && s[i+1] <= '9' {
			return true
		}
	}
	return false
}

// additive: a sentence (lower case) adding one more ("it also crashes
// on 17.4", "on 17.4 too"), not opening with "Also," as an aside
// ("Also we moved the VM to Python 3.12").
func additive(low string) bool {
	rest := strings.TrimLeft(low, " ")
	if r, ok := strings.CutPrefix(rest, "also"); ok {
		rest = r
	}
	return lex.HasPhrase(rest, "also") || lex.HasPhrase(rest, "too") || lex.HasPhrase(rest, "as well")
}
