package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory"
)

// stdAnswer is what encode wrote before appendAnswer: encoding/json with
// HTML escaping off.
func stdAnswer(t testing.TB, v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return b.Bytes()
}

// TestAppendAnswerMatchesEncodingJSON fills every exported field of random
// answers by reflection (so a field added to the wire types later is
// covered without touching this test) and requires appendAnswer's bytes to
// equal encoding/json's.
func TestAppendAnswerMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 3000 {
		var a engine.ContextAnswer
		fill(r, reflect.ValueOf(&a).Elem(), 0)
		want := stdAnswer(t, a)
		var got bytes.Buffer
		got.WriteString("prefix") // appendAnswer appends
		if !appendAnswer(&got, &a) {
			t.Fatalf("answer %d: appendAnswer refused a value encoding/json takes:\n%s", i, want)
		}
		if g := got.Bytes()[len("prefix"):]; !bytes.Equal(g, want) {
			t.Fatalf("answer %d differs:\n got %s\nwant %s", i, g, want)
		}
	}
}

// TestAppendAnswerRefusesWhatEncodingJSONRefuses: a NaN score or a year
// past 9999 makes appendAnswer give up (encode then reports
// encoding/json's error) instead of writing invalid JSON.
func TestAppendAnswerRefusesWhatEncodingJSONRefuses(t *testing.T) {
	y10k := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, sec := range map[string]engine.Sections{
		"NaN score":                  {RAG: []engine.RAGTurn{{Score: float32(math.NaN())}}},
		"+Inf score":                 {RAG: []engine.RAGTurn{{Score: float32(math.Inf(1))}}},
		"year 10000":                 {RAG: []engine.RAGTurn{{CreatedAt: y10k}}},
		"profile item year 10000":    {Profile: &memory.Profile{Topics: []memory.ProfileItem{{Confirmed: y10k}}}},
		"profile updated year 10000": {Profile: &memory.Profile{UpdatedAt: y10k}},
	} {
		a := engine.ContextAnswer{Sections: &sec}
		if _, err := json.Marshal(a); err == nil {
			t.Fatalf("%s: encoding/json takes it; the test is wrong", name)
		}
		var b bytes.Buffer
		if appendAnswer(&b, &a) {
			t.Errorf("%s: appendAnswer wrote %s", name, b.Bytes())
		}
	}
}

// FuzzAppendJSONString holds the string escaper to encoding/json's.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := bytes.TrimSuffix(stdAnswer(t, s), []byte{'\n'})
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

var trickyStrings = []string{
	"", "plain ascii text that is longer than eight bytes", `quote " and back\slash`,
	"tab\tnew\nline\rcr\bbs\fff\x00nul\x1fus\x7fdel", "<html> & 'amp'", "héllo wörld ✓ 😀",
	"bad \xff utf8 \xc3", "line\u2028sep\u2029para", "12345678\"2345678\\", "\x80\x80\x80\x80\x80\x80\x80\x80\x80",
}

// fill sets v (and everything under it) to random values.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(randString(r))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt([]int64{0, 1, -1, r.Int64N(1 << 40), math.MaxInt64}[r.IntN(5)])
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1e-7, 0.0235, 1, 123456.78, 3e21, -0.5, float64(r.Float32())}[r.IntN(8)])
	case reflect.Pointer:
		if depth < 8 && r.IntN(4) > 0 {
			p := reflect.New(v.Type().Elem())
			fill(r, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		switch n := r.IntN(5); {
		case n == 0 || depth >= 8: // nil (deep enough for a profile item's sources)
		case n == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			locs := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.Local}
			v.Set(reflect.ValueOf(time.Unix(r.Int64N(4e9), r.Int64N(1e9)*int64(r.IntN(2))).In(locs[r.IntN(3)])))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	case reflect.Map:
		if r.IntN(2) == 0 {
			m := reflect.MakeMap(v.Type())
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(r, k, depth+1)
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
			v.Set(m)
		}
	}
}

func randString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return ""
	}
	var b strings.Builder
	for range r.IntN(4) + 1 {
		s := trickyStrings[r.IntN(len(trickyStrings))]
		if r.IntN(2) == 0 && len(s) > 1 {
			s = s[r.IntN(len(s)):] // cuts may split a rune: invalid UTF-8 on purpose
		}
		b.WriteString(s)
	}
	return b.String()
}

func BenchmarkAnswerEncode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	text := strings.Repeat("turn 16: migration episode ticket budget schedule release cache hotel customer invoice. ", 4)
	var res engine.ContextResult
	res.Context = strings.Repeat(text, 25)
	for i := range 30 {
		res.Messages = append(res.Messages, engine.ChatMessage{Role: "user", Content: text})
		res.Sections.RAG = append(res.Sections.RAG, engine.RAGTurn{Seq: int64(i), Role: "user", Content: text, Score: r.Float32(), CreatedAt: time.Now()})
	}
	// A profile as make bench-http's users have: 25 topics of up to 10 chats.
	res.Sections.Profile = &memory.Profile{UserID: "user-7", Model: "extractive", UpdatedAt: time.Now()}
	for i := range 25 {
		it := memory.ProfileItem{ID: fmt.Sprintf("t%012x", r.Uint64()>>16), Text: "migration", Confirmed: time.Now()}
		for c := range 1 + i%10 {
			it.Sources = append(it.Sources, memory.Source{ChatID: fmt.Sprintf("chat-%d", 7+20*c), FromSeq: 1, ToSeq: 40})
		}
		res.Sections.Profile.Topics = append(res.Sections.Profile.Topics, it)
	}
	a := res.Answer(nil)
	var buf bytes.Buffer
	b.Run("appendAnswer", func(b *testing.B) {
		for b.Loop() {
			buf.Reset()
			appendAnswer(&buf, &a)
		}
		b.SetBytes(int64(buf.Len()))
	})
	b.Run("encoding/json", func(b *testing.B) {
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			_ = e.Encode(a)
		}
		b.SetBytes(int64(buf.Len()))
	})
}
