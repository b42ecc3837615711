// Package episodes cuts a chat's turns into episodes and folds episode
// summaries into the running (root) summary. It is pure: no store, no LLM.
//
// Where an episode ends (Cut): at a topic shift — a drop in lexical
// cohesion between the windows of turns on either side of a gap, as in
// Hearst's TextTiling — at a silence of at least Gap, or when it reaches
// MaxTurns; never below MinTurns unless a silence forces it, and a stretch
// shorter than MinTurns that a silence ends joins the episode before it. Cutting is
// incremental: it starts at a cursor (the end of the last closed episode),
// so closed episodes are never looked at again, and a boundary is decided
// only once the turns after it that the decision reads exist, so cutting
// the same turns in one go or in several steps gives the same episodes.
package episodes

import (
	"math"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

// Params are an agent's episode settings (memory.episode_*).
type Params struct {
	MinTurns int           // default DefaultMinTurns
	MaxTurns int           // default DefaultMaxTurns
	Gap      time.Duration // default DefaultGap; a silence this long ends an episode
	// Window is the number of turns on each side of a gap whose words are
	// compared (default 3).
	Window int
	// Depth is how far cohesion must dip below the peaks on both sides of
	// a gap for a topic shift: (left peak - c) + (right peak - c) >= Depth
	// (default 0.25)...
	Depth float64
	// ...and cohesion at the gap must be at most Dip times the mean of
	// those two peaks (default 0.45): a relative drop, so that the noise of
	// a long stretch on one topic does not cut it.
	Dip float64
}

// Episode defaults: memory.episode_min_turns, episode_max_turns and
// episode_gap (config refers to these), and the cohesion test's tuning.
const (
	DefaultMinTurns = 6
	DefaultMaxTurns = 40
	DefaultGap      = 2 * time.Hour
	DefaultWindow   = 3
	DefaultDepth    = 0.25
	DefaultDip      = 0.45
)

func (p Params) withDefaults() Params {
	if p.MinTurns <= 0 {
		p.MinTurns = DefaultMinTurns
	}
	if p.MaxTurns <= 0 {
		p.MaxTurns = DefaultMaxTurns
	}
	p.MinTurns = min(p.MinTurns, p.MaxTurns)
	if p.Gap <= 0 {
		p.Gap = DefaultGap
	}
	if p.Window <= 0 {
		p.Window = DefaultWindow
	}
	if p.Depth <= 0 {
		p.Depth = DefaultDepth
	}
	if p.Dip <= 0 {
		p.Dip = DefaultDip
	}
	return p
}

// Lookback is how many turns before the cursor Cut wants as prev, so that
// its windows read what they would have read had it never stopped there.
func (p Params) Lookback() int { return 2 * p.withDefaults().Window }

// Reason says why an episode ended.
type Reason string

const (
	ReasonShift Reason = "topic_shift"
	ReasonGap   Reason = "gap"
	ReasonCap   Reason = "max_turns"
)

// Span is one closed episode: turns[From:To] of the slice given to Cut.
type Span struct {
	From, To int
	Reason   Reason
}

// Cut closes the episodes that end within turns[..] at a seq <= last.
// turns start at the cursor (the first turn after the last closed episode)
// and may run past last (the recent window): those turns are read to decide
// boundaries but never owned. prev are up to Params.Lookback() turns before
// the cursor, read only for cohesion. The spans are contiguous from 0; the
// turns after the last span are the open tail.
func Cut(prev, turns []memory.Message, last int64, p Params) []Span {
	p = p.withDefaults()
	all := make([]memory.Message, 0, len(prev)+len(turns))
	all = append(append(all, prev...), turns...)
	c := cohesion(all, p.Window)
	off := len(prev)
	// at gives the cohesion of the gap before turns[i] (NaN: unknown).
	at := func(i int) float64 {
		j := off + i
		if j <= 0 || j >= len(c) {
			return math.NaN()
		}
		return c[j]
	}
	var spans []Span
	start := 0
	for i := 1; i <= len(turns); i++ {
		if turns[i-1].Seq > last {
			break
		}
		size := i - start
		var why Reason
		switch {
		case i < len(turns) && silence(turns[i-1], turns[i]) >= p.Gap:
			why = ReasonGap
		case size >= p.MaxTurns:
			why = ReasonCap
		case size >= p.MinTurns && shift(at, i, len(turns), p):
			why = ReasonShift
		default:
			continue
		}
		if why != ReasonCap {
			// A stretch shorter than MinTurns that a silence ends (a
			// "Yup, ttyl!") would be an episode with nothing to say: it
			// stays with this one, which then ends at that silence.
			k, known := silenceAhead(turns, i, p)
			if !known {
				break // decided once the turns that decision reads exist
			}
			if k > 0 && k-start <= p.MaxTurns {
				continue
			}
		}
		spans = append(spans, Span{From: start, To: i, Reason: why})
		start = i
	}
	return spans
}

// silenceAhead finds a silence that ends a stretch shorter than MinTurns
// starting at turns[i]: the k in (i, i+MinTurns) with a silence before
// turns[k] (0: none). known is false while those turns do not all exist.
func silenceAhead(turns []memory.Message, i int, p Params) (k int, known bool) {
	for k = i + 1; k < i+p.MinTurns; k++ {
		if k >= len(turns) {
			return 0, false
		}
		if silence(turns[k-1], turns[k]) >= p.Gap {
			return k, true
		}
	}
	return 0, true
}

func silence(a, b memory.Message) time.Duration {
	if a.CreatedAt.IsZero() || b.CreatedAt.IsZero() {
		return 0
	}
	return b.CreatedAt.Sub(a.CreatedAt)
}

// shift reports a topic shift at the gap before turns[i]: the gap is a
// local minimum of cohesion, dips at least p.Depth below the highest
// cohesion within a window on each side, and is at most p.Dip times the
// mean of those peaks. Undecided (false) while the turns
// that decision reads are not all there yet.
func shift(at func(int) float64, i, n int, p Params) bool {
	if i+2*p.Window > n { // at(i+Window) reads turns up to i+2*Window-1
		return false
	}
	ci := at(i)
	if math.IsNaN(ci) {
		return false
	}
	left, right := ci, ci
	for k := 1; k <= p.Window; k++ {
		if v := at(i - k); !math.IsNaN(v) {
			if k == 1 && v < ci {
				return false
			}
			left = max(left, v)
		}
		if v := at(i + k); !math.IsNaN(v) {
			if k == 1 && v <= ci {
				return false
			}
			right = max(right, v)
		}
	}
	return (left-ci)+(right-ci) >= p.Depth && ci <= p.Dip*(left+right)/2
}

// cohesion returns, for every gap j (between turns[j-1] and turns[j]), the
// cosine similarity of the word counts of the w turns before and the w
// turns after it (c[0] is unused). Windows slide one turn per gap and the
// dot product and norms are updated term by term, so the whole pass is
// linear in the number of words.
func cohesion(turns []memory.Message, w int) []float64 {
	n := len(turns)
	c := make([]float64, n)
	if n < 2 {
		return c
	}
	terms := make([][]uint32, n)
	for i, t := range turns {
		terms[i] = termsOf(t.Content)
	}
	var win [2]map[uint32]float64
	win[0], win[1] = map[uint32]float64{}, map[uint32]float64{}
	var norm [2]float64
	dot := 0.0
	// add adds d to term x of side s (0 left, 1 right), keeping dot and norm.
	add := func(s int, x uint32, d float64) {
		v := win[s][x]
		norm[s] += 2*v*d + d*d
		dot += d * win[1-s][x]
		if v+d == 0 {
			delete(win[s], x)
		} else {
			win[s][x] = v + d
		}
	}
	move := func(s, turn int, d float64) {
		if turn < 0 || turn >= n {
			return
		}
		for _, x := range terms[turn] {
			add(s, x, d)
		}
	}
	// Gap 1: left = turns[max(0,1-w):1], right = turns[1:1+w].
	move(0, 0, 1)
	for k := 1; k <= w; k++ {
		move(1, k, 1)
	}
	for j := 1; j < n; j++ {
		if j > 1 {
			move(0, j-1-w, -1) // leaves the left window
			move(1, j-1, -1)   // crosses the gap
			move(0, j-1, 1)
			move(1, j-1+w, 1) // enters the right window
		}
		if norm[0] > 1e-9 && norm[1] > 1e-9 {
			c[j] = dot / math.Sqrt(norm[0]*norm[1])
		}
	}
	return c
}

// termsOf returns the hashes (FNV-1a) of the content words of s: runs of
// letters and digits, lower-cased, at least three bytes long, not a stop
// word; with repeats.
func termsOf(s string) []uint32 {
	out := make([]uint32, 0, len(s)/6)
	var buf [48]byte
	n := 0
	flush := func() {
		if n >= 3 && n <= len(buf) && !stop[string(buf[:n])] {
			h := uint32(2166136261)
			for _, b := range buf[:n] {
				h = (h ^ uint32(b)) * 16777619
			}
			out = append(out, h)
		}
		n = 0
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r > utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			r = unicode.ToLower(r)
			if n+utf8.RuneLen(r) <= len(buf) {
				n += utf8.EncodeRune(buf[n:], r)
			} else {
				n = len(buf) + 1
			}
			continue
		default:
			flush()
			continue
		}
		if n < len(buf) {
			buf[n] = byte(r)
			n++
		} else {
			n = len(buf) + 1 // too long to be a word: skipped
		}
	}
	flush()
	return out
}

var stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{"the", "and", "for", "are", "but", "not", "you", "your", "all", "any", "can", "had", "has", "have", "her", "his", "him", "was", "one", "our", "out", "get", "got", "its", "let", "may", "now", "see", "she", "too", "use", "way", "who", "why", "how", "what", "when", "where", "which", "with", "that", "this", "these", "those", "then", "than", "there", "their", "they", "them", "from", "into", "onto", "just", "also", "some", "such", "very", "will", "would", "could", "should", "about", "after", "before", "again", "been", "being", "were", "here", "more", "most", "much", "only", "over", "same", "so", "yes", "yeah", "okay", "sure", "thanks", "thank", "did", "does", "doing", "done", "like", "well", "really", "know", "think", "want", "need", "going", "make", "good", "great", "right", "each", "other", "because", "while", "both", "own", "off", "down", "even", "still", "ever", "never", "something", "anything", "things", "thing"} {
		m[w] = true
	}
	return m
}()
