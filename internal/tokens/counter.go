package tokens

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Counter counts and cuts text in one tokenizer. Budgets, usage figures and
// token-based truncation all count in the agent's Counter.
type Counter interface {
	// Name is the tokenizer's name: cl100k or o200k.
	Name() string
	Count(s string) int
	// Truncate returns the longest prefix of s, cut at a rune boundary,
	// of at most max tokens.
	Truncate(s string, max int) string
}

// Tokenizer names accepted by ByName (memory.tokenizer).
const (
	CL100KName = "cl100k"
	O200KName  = "o200k"
)

// ByName returns the named tokenizer ("" is cl100k). Both are offline: the
// BPE tables are compiled into the binary.
func ByName(name string) (Counter, error) {
	switch strings.ToLower(name) {
	case "", CL100KName, "cl100k_base":
		return CL100K, nil
	case O200KName, "o200k_base":
		return O200K(), nil
	}
	return nil, fmt.Errorf("tokens: unknown tokenizer %q (want cl100k or o200k)", name)
}

// CL100K is the fast, exact cl100k counter of this package.
var CL100K Counter = cl100k{}

type cl100k struct{}

func (cl100k) Name() string                      { return CL100KName }
func (cl100k) Count(s string) int                { return Count(s) }
func (cl100k) Truncate(s string, max int) string { return Truncate(s, max) }

var (
	o200kOnce sync.Once
	o200k     *codecCounter
)

// O200K is the o200k counter (GPT-4o and later): the library's codec,
// with the same whole-string memo as cl100k. Built at first use.
func O200K() Counter {
	o200kOnce.Do(func() {
		c, err := tokenizer.Get(tokenizer.O200kBase)
		if err != nil {
			panic(fmt.Sprintf("tokens: o200k tables: %v", err)) // compiled in: cannot happen
		}
		o200k = &codecCounter{name: O200KName, codec: c, whole: newMemo()}
	})
	return o200k
}

type codecCounter struct {
	name  string
	codec tokenizer.Codec
	whole *memo
}

func (c *codecCounter) Name() string { return c.name }

func (c *codecCounter) Count(s string) int {
	if s == "" {
		return 0
	}
	if n, ok := c.whole.get(s); ok {
		return n
	}
	n, err := c.codec.Count(toValid(s))
	if err != nil {
		n = utf8.RuneCountInString(s) // never below the true count: a token holds at least one rune's bytes
	}
	if len(s) <= memoMaxKey {
		c.whole.put(s, n)
	}
	return n
}

func (c *codecCounter) Truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if c.Count(s) <= max {
		return s
	}
	v := toValid(s)
	_, toks, err := c.codec.Encode(v)
	if err != nil || len(toks) <= max {
		return v
	}
	prefix := strings.Join(toks[:max], "")
	for !utf8.ValidString(prefix) {
		prefix = prefix[:len(prefix)-1]
	}
	for c.Count(prefix) > max { // a cut rune can re-tokenise longer
		_, size := utf8.DecodeLastRuneInString(prefix)
		prefix = prefix[:len(prefix)-size]
	}
	return prefix
}
