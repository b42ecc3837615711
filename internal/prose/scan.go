package prose

import "strings"

// Hand-written scanners for the regular expressions that ran on every
// sentence of every turn (Go's backtracker was most of the CPU of a busy
// server). Each matches exactly what its regular expression matched; the
// fuzz tests in scan_test.go hold the expressions as oracles.

// isWordByte is RE2's \w on one byte (a byte of a multi-byte rune is not).
func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// threeByte reports whether s[i:] starts with the three-byte rune
// E2 b1 b2 (…, ’, ”, •). An E2 byte always starts a rune, as the regular
// expressions decode text, so a byte scanner sees the runes they see.
func threeByte(s string, i int, b1, b2 byte) bool {
	return i+2 < len(s) && s[i] == 0xE2 && s[i+1] == b1 && s[i+2] == b2
}

// codeSignsAtLeast2 reports whether text holds two matches of
// `==|!=|->|=>|:=|&&|\|\||\w\(|[{};<>\\^_|#]` (leftmost-first,
// non-overlapping, as FindAllString counts them).
func codeSignsAtLeast2(text string) bool {
	n := 0
	for i := 0; i < len(text); {
		c := text[i]
		var next byte
		if i+1 < len(text) {
			next = text[i+1]
		}
		w := 0
		switch {
		case c == '=' && (next == '=' || next == '>'), c == '!' && next == '=', c == '-' && next == '>',
			c == ':' && next == '=', c == '&' && next == '&', c == '|' && next == '|', isWordByte(c) && next == '(':
			w = 2
		case c == '{' || c == '}' || c == ';' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '_' || c == '|' || c == '#':
			w = 1
		}
		if w == 0 {
			i++
			continue
		}
		if n++; n >= 2 {
			return true
		}
		i += w
	}
	return false
}

// dropBullets removes what `(?m)^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+`
// matches: a list item's marker at the start of a line.
func dropBullets(text string) string {
	var out []byte // nil until the first marker: most text has none
	last := 0
	for ls := 0; ls < len(text); {
		if end := bulletEnd(text, ls); end > ls {
			out = append(out, text[last:ls]...)
			last = end
		}
		nl := strings.IndexByte(text[ls:], '\n')
		if nl < 0 {
			break
		}
		ls += nl + 1
	}
	if out == nil && last == 0 {
		return text
	}
	return string(append(out, text[last:]...))
}

// bulletEnd is where a list marker starting the line at ls ends (ls:
// none).
func bulletEnd(text string, ls int) int {
	i := ls
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	switch {
	case i >= len(text):
		return ls
	case text[i] == '-' || text[i] == '*' || text[i] == '+':
		i++
	case threeByte(text, i, 0x80, 0xA2): // •
		i += 3
	default:
		d := i
		for d < len(text) && d-i < 4 && text[d] >= '0' && text[d] <= '9' {
			d++
		}
		if d == i || d-i > 3 || d >= len(text) || (text[d] != '.' && text[d] != ')') {
			return ls
		}
		i = d + 1
	}
	sp := i
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i == sp {
		return ls
	}
	return i
}
