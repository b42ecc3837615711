package memory

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxIDBytes bounds the ids callers give: chat, user, agent and message
// ids.
const MaxIDBytes = 256

// ErrIDNotUTF8 is CheckID's error for an id that is not valid UTF-8.
var ErrIDNotUTF8 = errors.New("is not valid UTF-8")

// CheckID says what is wrong with a non-empty id, in words that follow its
// name ("chat_id is blank"); nil when nothing is. The API and an import
// hold ids to the same rule, so that nothing stored is out of the API's
// reach.
func CheckID(v string) error {
	switch {
	case len(v) > MaxIDBytes:
		return fmt.Errorf("is longer than %d bytes", MaxIDBytes)
	case !utf8.ValidString(v):
		return ErrIDNotUTF8
	case strings.TrimSpace(v) == "":
		return errors.New("is blank")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return errors.New("contains control characters")
	case v == "." || v == "..":
		// As a path segment, escaped or not, clients and proxies resolve
		// it away: such a chat could be written but never read or erased.
		return errors.New(`is "." or "..", which a URL path cannot carry`)
	}
	return nil
}

// CheckName says what is wrong with a tenant's or a configured agent's
// name (at most 128 bytes, no spaces or control characters: they are
// labels in logs and metrics); nil when nothing is.
func CheckName(s string) error {
	switch {
	case s == "":
		return errors.New("must not be empty")
	case len(s) > 128:
		return errors.New("must be at most 128 bytes")
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		return errors.New("must not contain spaces or control characters")
	}
	return nil
}
