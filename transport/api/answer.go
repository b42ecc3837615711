package api

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory"
)

// The answer of /v1/context is 10-40 KB of JSON and carries its text
// three times (context, messages, sections). encoding/json spent 7-9% of
// a request's CPU on it: walking the structs by reflection, and escaping
// the text a byte at a time. appendAnswer writes the parts that hold the
// text (the context, the messages, the retrieved and recent turns, the
// summary, the profile) and the usage by hand, skipping plain ASCII eight bytes at a
// time, and hands the rest (episodes, facts) to encoding/json. Its output is
// byte for byte encoding/json's with HTML escaping off (answer_test.go
// holds it to that on random answers).

// appendAnswer appends a as encoding/json's Encoder (SetEscapeHTML(false))
// writes it, with the final newline. ok is false when a holds a value
// encoding/json refuses (a NaN score, a year past 9999): the caller then
// encodes it with encoding/json, which reports the error.
func appendAnswer(dst *bytes.Buffer, a *engine.ContextAnswer) (ok bool) {
	w := answerWriter{buf: dst.AvailableBuffer()}
	b := append(w.buf, `{"chat_id":`...)
	b = appendJSONString(b, a.ChatID)
	b = strField(b, `,"agent":`, a.Agent)
	b = strField(b, `,"strategy":`, string(a.Strategy))
	if a.Context != nil {
		b = strField(b, `,"context":`, *a.Context)
	}
	if a.Messages != nil {
		b = append(b, `,"messages":`...)
		b = appendList(b, *a.Messages, appendMessage)
	}
	w.buf = b
	if a.Sections != nil {
		w.raw(`,"sections":`)
		w.sections(a.Sections)
	}
	w.raw(`,"usage":`)
	w.usage(&a.Usage)
	w.raw(`,"degraded":`)
	w.buf = appendStrings(w.buf, a.Degraded)
	w.raw("}\n")
	if w.failed {
		return false
	}
	dst.Write(w.buf)
	return true
}

// answerWriter appends to buf; value hands a part to encoding/json.
type answerWriter struct {
	buf    []byte
	tmp    bytes.Buffer
	enc    *json.Encoder // on tmp, made at the first value
	failed bool
}

func (w *answerWriter) raw(s string) { w.buf = append(w.buf, s...) }

// value appends v as encoding/json marshals it.
func (w *answerWriter) value(v any) {
	if w.failed {
		return
	}
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.tmp)
		w.enc.SetEscapeHTML(false)
	}
	w.tmp.Reset()
	if err := w.enc.Encode(v); err != nil {
		w.failed = true
		return
	}
	w.buf = append(w.buf, bytes.TrimSuffix(w.tmp.Bytes(), []byte{'\n'})...)
}

func (w *answerWriter) sections(s *engine.Sections) {
	w.raw(`{"rag":`)
	w.buf = appendList(w.buf, s.RAG, w.ragTurn)
	w.raw(`,"episodes":`)
	w.value(s.Episodes)
	w.raw(`,"facts":`)
	w.value(s.Facts)
	w.raw(`,"profile":`)
	if s.Profile == nil {
		w.raw("null")
	} else {
		w.profile(s.Profile)
	}
	w.raw(`,"summary":`)
	if s.Summary == nil {
		w.raw("null")
	} else {
		w.summary(s.Summary)
	}
	w.raw(`,"recent":`)
	w.buf = appendList(w.buf, s.Recent, w.recentTurn)
	w.buf = append(w.buf, '}')
}

// appendList writes items as a JSON array, each by one (null when items is
// nil, as encoding/json writes a nil slice).
func appendList[T any](b []byte, items []T, one func([]byte, *T) []byte) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = one(b, &items[i])
	}
	return append(b, ']')
}

func (w *answerWriter) ragTurn(b []byte, t *engine.RAGTurn) []byte {
	b = append(b, '{')
	if t.ChatID != "" {
		b = strField(b, `"chat_id":`, t.ChatID)
		b = append(b, ',')
	}
	b = append(b, `"seq":`...)
	b = strconv.AppendInt(b, t.Seq, 10)
	b = strField(b, `,"role":`, t.Role)
	if t.Name != "" {
		b = strField(b, `,"name":`, t.Name)
	}
	b = strField(b, `,"content":`, t.Content)
	b = append(b, `,"score":`...)
	b = w.float32(b, t.Score)
	b = append(b, `,"created_at":`...)
	b = w.time(b, t.CreatedAt)
	if t.Neighbor {
		b = append(b, `,"neighbor":true`...)
	}
	if len(t.Passages) > 0 {
		b = append(b, `,"passages":`...)
		b = appendList(b, t.Passages, appendPassage)
	}
	return append(b, '}')
}

func appendPassage(b []byte, p *engine.PassageRef) []byte {
	b = append(b, `{"from":`...)
	b = strconv.AppendInt(b, int64(p.From), 10)
	b = append(b, `,"to":`...)
	b = strconv.AppendInt(b, int64(p.To), 10)
	b = append(b, `,"len":`...)
	b = strconv.AppendInt(b, int64(p.Len), 10)
	return append(b, '}')
}

func (w *answerWriter) recentTurn(b []byte, t *engine.Turn) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, t.Seq, 10)
	b = strField(b, `,"role":`, t.Role)
	b = strField(b, `,"name":`, t.Name)
	b = strField(b, `,"content":`, t.Content)
	b = append(b, `,"created_at":`...)
	b = w.time(b, t.CreatedAt)
	if t.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	return append(b, '}')
}

// summary writes the running summary (a few KB of lists and narrative).
func (w *answerWriter) summary(s *memory.Summary) {
	b := append(w.buf, `{"topics":`...)
	b = appendStrings(b, s.Topics)
	b = append(b, `,"entities":`...)
	b = appendList(b, s.Entities, appendEntity)
	for _, l := range [...]struct {
		key   string
		items []string
	}{{`,"actions_taken":`, s.ActionsTaken}, {`,"decisions":`, s.Decisions},
		{`,"open_questions":`, s.OpenQuestions}, {`,"user_preferences":`, s.UserPreferences}} {
		b = append(b, l.key...)
		b = appendStrings(b, l.items)
	}
	b = strField(b, `,"narrative":`, s.Narrative)
	b = append(b, `,"covered_from_seq":`...)
	b = strconv.AppendInt(b, s.CoveredFromSeq, 10)
	b = append(b, `,"covered_to_seq":`...)
	b = strconv.AppendInt(b, s.CoveredToSeq, 10)
	b = append(b, `,"stale":`...)
	b = strconv.AppendBool(b, s.Stale)
	b = strField(b, `,"model":`, s.Model)
	b = strField(b, `,"prompt_version":`, s.PromptVersion)
	b = append(b, `,"updated_at":`...)
	b = w.time(b, s.UpdatedAt)
	w.buf = append(b, '}')
}

// profile writes the user's profile: several KB of items, each with its
// sources, in every answer of a user who has one (by reflection it was 3%
// of a running_summary request's CPU).
func (w *answerWriter) profile(p *memory.Profile) {
	b := strField(w.buf, `{"user_id":`, p.UserID)
	for _, l := range [...]struct {
		key   string
		items []memory.ProfileItem
	}{{`,"entities":`, p.Entities}, {`,"user_preferences":`, p.UserPreferences},
		{`,"topics":`, p.Topics}, {`,"open_questions":`, p.OpenQuestions}} {
		b = append(b, l.key...)
		b = appendList(b, l.items, w.profileItem)
	}
	b = strField(b, `,"model":`, p.Model)
	b = append(b, `,"updated_at":`...)
	b = w.time(b, p.UpdatedAt)
	w.buf = append(b, '}')
}

func (w *answerWriter) profileItem(b []byte, it *memory.ProfileItem) []byte {
	b = strField(b, `{"id":`, it.ID)
	for _, f := range [...]struct{ key, v string }{{`,"name":`, it.Name}, {`,"type":`, it.Type},
		{`,"details":`, it.Details}, {`,"text":`, it.Text}} {
		if f.v != "" { // omitempty
			b = strField(b, f.key, f.v)
		}
	}
	b = append(b, `,"sources":`...)
	b = appendList(b, it.Sources, appendSource)
	b = append(b, `,"confirmed":`...)
	b = w.time(b, it.Confirmed)
	return append(b, '}')
}

func appendSource(b []byte, s *memory.Source) []byte {
	b = strField(b, `{"chat_id":`, s.ChatID)
	b = append(b, `,"from_seq":`...)
	b = strconv.AppendInt(b, s.FromSeq, 10)
	b = append(b, `,"to_seq":`...)
	b = strconv.AppendInt(b, s.ToSeq, 10)
	return append(b, '}')
}

func (w *answerWriter) usage(u *engine.Usage) {
	b := w.buf
	for _, f := range [...]struct {
		key string
		n   int64
	}{{`{"budget_tokens":`, int64(u.BudgetTokens)}, {`,"total_tokens":`, int64(u.TotalTokens)},
		{`,"rag_tokens":`, int64(u.RAGTokens)}, {`,"episode_tokens":`, int64(u.EpisodeTokens)},
		{`,"fact_tokens":`, int64(u.FactTokens)}, {`,"profile_tokens":`, int64(u.ProfileTokens)},
		{`,"summary_tokens":`, int64(u.SummaryTokens)}, {`,"recent_tokens":`, int64(u.RecentTokens)},
		{`,"summarised_turns":`, u.SummarizedTurns}, {`,"dropped_turns":`, u.DroppedTurns}} {
		b = append(b, f.key...)
		b = strconv.AppendInt(b, f.n, 10)
	}
	if len(u.DroppedSeqs) > 0 {
		b = append(b, `,"dropped_seqs":`...)
		b = appendList(b, u.DroppedSeqs, func(b []byte, q *int64) []byte { return strconv.AppendInt(b, *q, 10) })
	}
	b = append(b, `,"filtered_turns":`...)
	b = strconv.AppendInt(b, u.FilteredTurns, 10)
	w.buf = append(b, '}')
}

// appendStrings writes a list of strings (null when nil, as encoding/json).
func appendStrings(b []byte, ss []string) []byte {
	return appendList(b, ss, func(b []byte, s *string) []byte { return appendJSONString(b, *s) })
}

func appendEntity(b []byte, e *memory.Entity) []byte {
	b = strField(b, `{"name":`, e.Name)
	b = strField(b, `,"type":`, e.Type)
	b = strField(b, `,"details":`, e.Details)
	return append(b, '}')
}

func appendMessage(b []byte, m *engine.ChatMessage) []byte {
	b = strField(b, `{"role":`, m.Role)
	if m.Name != "" {
		b = strField(b, `,"name":`, m.Name)
	}
	b = strField(b, `,"content":`, m.Content)
	return append(b, '}')
}

// float32 appends f as encoding/json does: shortest decimal that reads
// back as the same float32, in exponent form below 1e-6 and from 1e21.
func (w *answerWriter) float32(b []byte, f float32) []byte {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		w.failed = true
		return b
	}
	format := byte('f')
	if abs := float32(math.Abs(float64(f))); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, float64(f), format, -1, 32)
	if format == 'e' { // e-09 to e-9, as encoding/json
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// time appends t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, quoted); a time it refuses fails the answer.
func (w *answerWriter) time(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		w.failed = true
	}
	return append(b, '"')
}

// appendJSONString appends s quoted and escaped as encoding/json does with
// HTML escaping off: '"', '\\' and control bytes escaped, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 as \u2028 and \u2029.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start, i := 0, 0
	for i < len(s) {
		// Eight bytes at a time while none needs a look: no byte below
		// 0x20, none '"' or '\\', none non-ASCII.
		for i+8 <= len(s) && plainASCII8(load64(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load64 is s[i:i+8] as a little-endian word (the compiler makes it one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// strField appends key (with its comma and colon) and s as a JSON string.
func strField(b []byte, key, s string) []byte { return appendJSONString(append(b, key...), s) }

const hexDigits = "0123456789abcdef"

// plainASCII8 reports whether none of w's eight bytes is below 0x20, '"',
// '\\' or 0x80 and above (the classic SWAR tests: a byte below n sets its
// high bit in (w - n*0x01..) & ^w; a byte equal to c is a zero of w^c).
func plainASCII8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := (w - 0x20*ones) & ^w
	q := w ^ ('"' * ones)
	bs := w ^ ('\\' * ones)
	quote := (q - ones) & ^q
	slash := (bs - ones) & ^bs
	return (less|quote|slash|w)&highs == 0
}
