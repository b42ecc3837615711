package facts

import (
	"regexp"
	"strings"
)

// Assignment is one setting a turn writes as code or config: a key and
// its value on a line of their own ("maxReplicas: 12",
// "DB_POOL_SIZE=10", "ledger_timeout_seconds: float = 30.0",
// `schedule_interval="30 3 * * *",`). A later turn setting the same key
// to another value changed it: the chat's newest setting is current.
type Assignment struct {
	Key   string // lower case, '-' as '_': "maxreplicas", "db_pool_size"
	Value string // as written, without its quotes
	Line  string // the line, trimmed
}

// Assignments returns the settings text writes, one per key. A key set
// to two values in one turn (two services, two environments) is left
// out: which one a later turn changes is not known. Only keys that read
// as identifiers count ("maxReplicas", "node-version", "FLASK_ENV",
// "cert-manager.io/cluster-issuer"): a plain word ("name", "image",
// "note: …") names too many things. A value is a literal (a number, a
// quoted string, a bare token in YAML or an env file), not an
// identifier in code ("this.maxSize = maxSize;"), and not a placeholder
// ("YOUR_API_KEY"). A program's statements are left out (a variable
// declared, a property written, a template), and CSS declarations: the
// same property of another selector is no change.
func Assignments(text string) []Assignment {
	if !strings.ContainsAny(text, ":=") && !strings.Contains(text, " to ") {
		return nil
	}
	var out []Assignment
	dup := map[string]bool{}
	var read []Assignment
	for _, line := range settingLines(text) {
		if a, ok := assignment(line); ok {
			read = append(read, a)
		}
	}
	for _, a := range append(read, proseSettings(text)...) {
		if dup[a.Key] {
			continue
		}
		if prev := assigned(out, a.Key); prev.Key != "" {
			dup[a.Key] = !SameValue(prev.Value, a.Value)
			continue
		}
		out = append(out, a)
	}
	if len(dup) == 0 {
		return out
	}
	kept := out[:0]
	for _, a := range out {
		if !dup[a.Key] {
			kept = append(kept, a)
		}
	}
	return kept
}

// settingLines are text's lines, each without a trailing comment ("60
// # averageUtilization: 60"), and its inline code spans ("Put it in
// settings as `LEDGER_TIMEOUT_SECONDS: float = 15.0` so ops can change
// it").
func settingLines(text string) []string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = trailingComment.ReplaceAllString(l, "")
	}
	if strings.Count(text, "`") >= 2 {
		for _, m := range inlineCode.FindAllStringSubmatch(text, -1) {
			lines = append(lines, m[1])
		}
	}
	return lines
}

// proseSettings are the settings a sentence gives a key by name
// ("bumped DB_POOL_SIZE up to 10, overflow stays at 10"), each with the
// words that set it as its line. The key reads as an identifier and the
// value holds a digit: "moved the party to 8" sets nothing.
func proseSettings(text string) []Assignment {
	if !strings.Contains(text, " to ") {
		return nil
	}
	var out []Assignment
	for _, m := range proseSetting.FindAllStringSubmatch(text, -1) {
		if !identKey.MatchString(m[1]) {
			continue
		}
		if a, ok := assignment(m[1] + "=" + strings.TrimRight(m[2], ".,;:")); ok {
			a.Line = strings.TrimRight(m[0], ".,;:")
			out = append(out, a)
		}
	}
	return out
}

var (
	proseSetting    = regexp.MustCompile("`?\\b([A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_])`? (?:(?:up|down|back) )?to `?([-+]?\\d[\\w.,:%]*)")
	trailingComment = regexp.MustCompile(`\s+(?:#|//)\s.*$`)
	inlineCode      = regexp.MustCompile("(?:^|[^`])`([^`\n]+)`(?:[^`]|$)")
	assignLine      = regexp.MustCompile(`^\s*(?:[-*]\s+)?(?:export\s+)?["'` + "`" + `]?([A-Za-z_][A-Za-z0-9_.\-/]*[A-Za-z0-9_])["'` + "`" + `]?\s*(?::\s*[A-Za-z]+\s*=|:|=)\s*(.+?)\s*[,;]?\s*$`)
	literal         = regexp.MustCompile(`^(?:"[^"]*"|'[^']*'|` + "`[^`]*`" + `|[-+]?\d[\d.,]*\s*[A-Za-z%]*|[A-Za-z0-9_.:/@#\-^~*+]+)$`)
	identKey        = regexp.MustCompile(`[_./-]|[a-z][A-Z]`)
	cssProp         = regexp.MustCompile(`^[a-z]+(?:-[a-z]+)+$`)
	bareIdent       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
)

// assignment reads one line as a setting.
func assignment(line string) (Assignment, bool) {
	if len(line) > 200 || !strings.ContainsAny(line, ":=") {
		return Assignment{}, false
	}
	m := assignLine.FindStringSubmatch(line)
	if m == nil || !identKey.MatchString(m[1]) || strings.HasPrefix(m[1], "http") {
		return Assignment{}, false
	}
	key, v := m[1], m[2]
	if len(v) > 80 || !literal.MatchString(v) || placeholder(v) {
		return Assignment{}, false
	}
	statement := strings.HasSuffix(strings.TrimSpace(line), ";")
	code := statement || strings.HasSuffix(strings.TrimSpace(line), ",")
	switch {
	case code && cssProp.MatchString(key):
		return Assignment{}, false // "border-radius: 4px;": a declaration of one selector
	case statement && strings.Contains(key, "."), strings.Contains(v, "${"):
		return Assignment{}, false // "listItem.textContent = 'No results';", a template: a program's state, not a setting
	}
	if bareIdent.MatchString(v) && !isBool(v) && (code || strings.Contains(v, ".")) {
		return Assignment{}, false // "this.maxSize = maxSize;", "apiKey = process.env.KEY": an identifier
	}
	v = strings.Trim(v, "\"'`")
	if v == "" {
		return Assignment{}, false // `key: ""`: set to nothing said
	}
	return Assignment{Key: strings.ReplaceAll(strings.ToLower(key), "-", "_"), Value: v, Line: strings.TrimSpace(line)}, true
}

func placeholder(v string) bool {
	low := strings.ToLower(v)
	for _, p := range []string{"your", "my_", "<", "xxx", "example", "placeholder", "_here", "changeme", "..."} {
		if strings.Contains(low, p) {
			return true
		}
	}
	return false
}

func isBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false":
		return true
	}
	return false
}

// normSetting compares values as written, but for quotes and case
// ("True" and "true", "'module'" and "module").
func normSetting(v string) string { return strings.ToLower(strings.Trim(v, "\"'` ")) }

// SameValue reports whether two settings of a key say the same.
func SameValue(a, b string) bool { return normSetting(a) == normSetting(b) }

func assigned(as []Assignment, key string) Assignment {
	for _, a := range as {
		if a.Key == key {
			return a
		}
	}
	return Assignment{}
}
