package config

import (
	"fmt"
	"strings"
)

// expand replaces ${VAR} and ${VAR:-default} in s with values from getenv.
// "$${" is a literal "${"; a bare $VAR is left alone (passwords contain $).
// getenv cannot tell unset from empty, so an empty variable counts as unset:
// ${VAR:-} allows it to be empty. It returns whether any variable was used
// and one message per problem; messages never contain variable values.
func expand(s string, getenv func(string) string) (out string, used bool, problems []string) {
	if !strings.Contains(s, "${") {
		return s, false, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			problems = append(problems, `unterminated "${" (write "$${" for a literal one)`)
			return s, used, problems
		}
		inner := s[i+2 : i+2+end]
		i += 2 + end + 1
		used = true
		name, def, hasDef := strings.Cut(inner, ":-")
		if !validEnvName(name) {
			problems = append(problems, fmt.Sprintf("invalid environment variable name %q in ${...}", name))
			continue
		}
		v := getenv(name)
		if v == "" {
			if !hasDef {
				problems = append(problems, fmt.Sprintf("environment variable %s is not set (write ${%s:-default} to give a default)", name, name))
				continue
			}
			v = def
		}
		b.WriteString(v)
	}
	return b.String(), used, problems
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
