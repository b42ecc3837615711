package facts

import (
	"path"
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
	if !strings.ContainsAny(text, ":=;") && !strings.Contains(text, " to ") && !strings.Contains(text, " --") {
		return nil
	}
	var out []Assignment
	dup := map[string]bool{}
	var read []Assignment
	eachSettingLine(text, func(line string, code bool) {
		if a, ok := assignment(line, code); ok {
			read = append(read, a)
		}
	})
	read = append(read, flagSettings(text)...)
	read = append(read, directiveSettings(text)...)
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

// eachSettingLine calls f with each line of text that may set something
// (a ':' or '=' in it), without a trailing comment ("60   #
// averageUtilization: 60"), and with each inline code span ("Put it in
// settings as `LEDGER_TIMEOUT_SECONDS: float = 15.0` so ops can change
// it").
func eachSettingLine(text string, f func(line string, code bool)) {
	fence := false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if !strings.ContainsAny(line, ":=") {
			continue
		}
		if strings.Contains(line, " #") || strings.Contains(line, " //") {
			line = trailingComment.ReplaceAllString(line, "")
		}
		f(line, fence)
	}
	for rest := text; ; {
		i := strings.IndexByte(rest, '`')
		if i < 0 {
			return
		}
		if strings.HasPrefix(rest[i:], "```") { // a fence: its lines were read above
			rest = rest[i+3:]
			continue
		}
		j := strings.IndexAny(rest[i+1:], "`\n")
		if j < 0 {
			return
		}
		if span := rest[i+1 : i+1+j]; rest[i+1+j] == '`' && strings.ContainsAny(span, ":=") {
			f(span, true)
		}
		rest = rest[i+2+j:]
	}
}

// flagSettings are the numbers a command line gives its long options,
// in code ("restic forget --prune --keep-daily 7 --keep-weekly 4",
// "`pg_dump --jobs=4`"): "--keep-daily 14" in a later command changed
// it. A flag's value is a number (with its unit): what follows a flag
// otherwise may be an argument of the command, not the flag's.
func flagSettings(text string) []Assignment {
	if !strings.Contains(text, " --") {
		return nil
	}
	var out []Assignment
	eachCodeLine(text, hasFlag, func(line string) {
		for _, ix := range flagValue.FindAllStringSubmatchIndex(line, -1) {
			if ix[0] > 0 && !isSpace(line[ix[0]-1]) || ix[1] < len(line) && !isSpace(line[ix[1]]) {
				continue // "x--y 3", "--jobs 4x"
			}
			flag, v := line[ix[2]:ix[3]], line[ix[4]:ix[5]]
			cmd := commandOf(line)
			if cmd == "" {
				continue // an option with no command named: whose it is is not known
			}
			out = append(out, Assignment{Key: cmd + " --" + strings.ReplaceAll(flag, "-", "_"), Value: v, Line: strings.TrimSpace(line)})
		}
	})
	return out
}

// commandOf names the command of a line: its words that are no options
// nor an option's number, the program by its base name ("ExecStart=
// /usr/bin/restic forget --prune --keep-daily 14" is "restic forget").
// "--timeout" is one setting of "helm upgrade ledger-api …" and another
// of "kubectl … rollout status", "--replicas" of "kubectl scale …
// deployment/api" another than of "… deployment/worker", and "occ
// config:system:set trusted_domains 1 --value" another than "…
// trusted_domains 2 --value".
func commandOf(line string) string {
	ws := strings.Fields(strings.ToLower(line))
	if len(ws) > 0 {
		if _, prog, ok := strings.Cut(ws[0], "="); ok {
			ws[0] = prog // "ExecStart=/usr/bin/restic"
		}
		ws[0] = path.Base(ws[0])
	}
	if len(ws) > 0 && ws[0] == "sudo" {
		ws = ws[1:]
	}
	var out []string
	for i, w := range ws {
		if strings.HasPrefix(w, "-") || i > 0 && strings.HasPrefix(ws[i-1], "-") && !strings.Contains(ws[i-1], "=") && startsNumber(w) {
			continue // an option, or its number ("--keep-daily 7")
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

var flagValue = regexp.MustCompile(`--([a-z][a-z0-9]*(?:-[a-z0-9]+)+|[a-z]{3,}[0-9]*)(?:=|\s+)(\d[\d.]*(?:%|[a-z]{1,3})?)`)

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// eachCodeLine calls f with each line of text's fenced code blocks (with
// the lines a trailing backslash continues it onto) and each of its
// inline code spans that want keeps.
func eachCodeLine(text string, want func(string) bool, f func(line string)) {
	fence := false
	var cont strings.Builder // a command continued over lines ("restic forget \")
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence, cont = !fence, strings.Builder{}
			continue
		}
		if !fence {
			continue
		}
		if body, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), "\\"); ok {
			cont.WriteString(body + " ")
			continue
		}
		line = cont.String() + line
		cont.Reset()
		if want(line) {
			f(line)
		}
	}
	for _, m := range inlineCode.FindAllStringSubmatch(text, -1) {
		if want(m[1]) {
			f(m[1])
		}
	}
}

// hasFlag: a line that may give a long option ("--keep-daily 7").
func hasFlag(line string) bool { return strings.Contains(line, "--") }

// directiveSettings are the numbers a config file's directives give, in
// code: a key, its value and a semicolon ("client_max_body_size 25m;",
// "proxy_read_timeout 120s;", nginx's form and its kin's). A later
// directive giving the key another value changed it. The key reads as an
// identifier, words joined by underscores: "listen 80;" names too many
// things.
func directiveSettings(text string) []Assignment {
	if !strings.Contains(text, ";") || !strings.Contains(text, "_") {
		return nil
	}
	var out []Assignment
	eachCodeLine(text, func(line string) bool { return strings.Contains(line, ";") }, func(line string) {
		if m := directive.FindStringSubmatch(line); m != nil {
			out = append(out, Assignment{Key: m[1], Value: m[2], Line: strings.TrimSpace(line)})
		}
	})
	return out
}

var directive = regexp.MustCompile(`^\s*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\s+(\d[\d.]*(?:[a-z]{1,2})?)\s*;\s*$`)

// proseSettings are the settings a sentence gives a key by name
// ("bumped DB_POOL_SIZE up to 10, overflow stays at 10"), each with the
// words that set it as its line. The key reads as an identifier and the
// value holds a digit: "moved the party to 8" sets nothing.
func proseSettings(text string) []Assignment {
	var out []Assignment
	for rest, at := text, 0; ; rest = rest[at+4:] {
		if at = strings.Index(rest, " to "); at < 0 {
			return out
		}
		// What follows is a value with a digit, what comes before a key
		// (an "up", "down" or "back" between them): a scan, as " to " is
		// in most sentences and an identifier in few.
		after := rest[at+4:]
		tick := len(after) - len(strings.TrimPrefix(after, "`"))
		v := after[tick:]
		if i := strings.IndexAny(v, " \n\t"); i >= 0 {
			v = v[:i]
		}
		if v == "" || !startsNumber(v) {
			continue
		}
		before := rest[:at]
		for _, w := range []string{" up", " down", " back"} {
			before = strings.TrimSuffix(before, w)
		}
		from := strings.LastIndexAny(before, " \n(") + 1
		key := strings.Trim(before[from:], "`")
		if key == "" || !strongKey.MatchString(key) || asked(rest, at) {
			continue
		}
		if a, ok := assignment(key+"="+strings.TrimRight(strings.Trim(v, "`"), ".,;:)"), false); ok {
			a.Line = strings.TrimRight(rest[from:at+4+tick+len(v)], ".,;:)")
			out = append(out, a)
		}
	}
}

var (
	trailingComment = regexp.MustCompile(`\s+(?:#|//)\s.*$`)
	inlineCode      = regexp.MustCompile("(?:^|[^`])`([^`\n]+)`(?:[^`]|$)")
	assignLine      = regexp.MustCompile(`^\s*(?:[-*]\s+)?(?:export\s+)?["'` + "`" + `]?([A-Za-z_][A-Za-z0-9_.\-/]*[A-Za-z0-9_])["'` + "`" + `]?\s*(?::\s*[A-Za-z]+\s*=|:|=)\s*(.+?)\s*[,;]?\s*$`)
	literal         = regexp.MustCompile(`^(?:"[^"]*"|'[^']*'|` + "`[^`]*`" + `|[-+]?\d[\d.,]*\s*[A-Za-z%]*|[A-Za-z0-9_.:/@#\-^~*+]+)$`)
	identKey        = regexp.MustCompile(`[_./-]|[a-z][A-Z]`)
	strongKey       = regexp.MustCompile(`[_./]|[a-z][A-Z]`) // an identifier outside code: no English word is one
	cssProp         = regexp.MustCompile(`^[a-z]+(?:-[a-z]+)+$`)
	bareIdent       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
)

// assignment reads one line as a setting; code says it is written as
// code (in a fence or an inline span). A key joined by a dash alone
// ("node-version") is one only there: "Check-in: 3pm", "Mon-Fri: 9am-5pm"
// and "T-shirt: M" are English.
func assignment(line string, code bool) (Assignment, bool) {
	if len(line) > 200 || !mayAssign(line) {
		return Assignment{}, false
	}
	m := assignLine.FindStringSubmatch(line)
	if m == nil || !identKey.MatchString(m[1]) || strings.HasPrefix(m[1], "http") {
		return Assignment{}, false
	}
	key, v := m[1], m[2]
	if len(v) > 80 || !literal.MatchString(v) || placeholder(v) || !code && !strongKey.MatchString(key) && !nestedKey(line, key) {
		return Assignment{}, false
	}
	statement := strings.HasSuffix(strings.TrimSpace(line), ";")
	ends := statement || strings.HasSuffix(strings.TrimSpace(line), ",") // a program's line, or a list's item
	switch {
	case ends && cssProp.MatchString(key):
		return Assignment{}, false // "border-radius: 4px;": a declaration of one selector
	case statement && strings.Contains(key, "."), strings.Contains(v, "${"):
		return Assignment{}, false // "listItem.textContent = 'No results';", a template: a program's state, not a setting
	}
	if bareIdent.MatchString(v) && !isBool(v) && (ends || strings.Contains(v, ".")) {
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

// mayAssign: line opens with a key that reads as an identifier, then
// ':' or '=' — the regular expression runs only where a scan finds it
// may match (most lines holding a colon are prose: "Note: …", "8:30").
func mayAssign(line string) bool {
	l := strings.TrimLeft(line, " \t")
	for _, p := range []string{"- ", "* ", "export "} {
		l = strings.TrimPrefix(l, p)
	}
	l = strings.TrimLeft(l, "\"'`")
	i, ident := 0, false
	for ; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '_' || c == '.' || c == '/' || c == '-':
			ident = ident || i > 0
		case c >= 'A' && c <= 'Z':
			ident = ident || i > 0 && l[i-1] >= 'a' && l[i-1] <= 'z'
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
		default:
			rest := strings.TrimLeft(l[i:], "\"'` \t")
			return ident && rest != "" && (rest[0] == ':' || rest[0] == '=')
		}
	}
	return false
}

// asked: the sentence around rest[at] asks or advises rather than says
// ("could we push DB_POOL_SIZE to 20?", "you could set MAX_CONN to 50").
func asked(rest string, at int) bool {
	start := strings.LastIndexAny(rest[:at], ".!?\n") + 1
	end := strings.IndexAny(rest[at:], ".!?\n")
	if end < 0 {
		end = len(rest) - at
	}
	return end < len(rest)-at && rest[at+end] == '?' || advised.MatchString(strings.ToLower(rest[start:at]))
}

// nestedKey: a lower-case key indented under another, as a config file
// nests it ("        node-version: 20" under "with:"), not a bullet.
func nestedKey(line, key string) bool {
	indent := len(line) - len(strings.TrimLeft(line, " \t"))
	return indent >= 2 && key == strings.ToLower(key) && !strings.HasPrefix(strings.TrimSpace(line), "- ")
}

// startsNumber: v opens with a digit, or a sign and a digit.
func startsNumber(v string) bool {
	v = strings.TrimLeft(v, "+-")
	return v != "" && v[0] >= '0' && v[0] <= '9'
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
