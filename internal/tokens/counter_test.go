package tokens

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestByNameAndO200K(t *testing.T) {
	cl, err := ByName("")
	if err != nil || cl.Name() != CL100KName {
		t.Fatalf("default tokenizer %v %v", cl, err)
	}
	o, err := ByName("o200k")
	if err != nil || o.Name() != O200KName {
		t.Fatalf("o200k: %v %v", o, err)
	}
	if _, err := ByName("p50k"); err == nil {
		t.Fatal("unknown tokenizer accepted")
	}
	// o200k's larger vocabulary takes fewer tokens on non-English text.
	text := strings.Repeat("Привет, как дела? Это проверка токенизатора. नमस्ते दुनिया ", 20)
	if o.Count(text) >= cl.Count(text) {
		t.Fatalf("o200k %d tokens, cl100k %d: want o200k fewer", o.Count(text), cl.Count(text))
	}
	if o.Count("hello world") != 2 || o.Count("") != 0 {
		t.Fatalf("o200k count of %q = %d", "hello world", o.Count("hello world"))
	}
	for _, max := range []int{0, 1, 5, 17, 100} {
		cut := o.Truncate(text, max)
		if o.Count(cut) > max || !strings.HasPrefix(text, cut) || !utf8.ValidString(cut) {
			t.Fatalf("Truncate(%d): %d tokens, prefix %v", max, o.Count(cut), strings.HasPrefix(text, cut))
		}
		if max > 0 && o.Count(cut) < max-2 {
			t.Fatalf("Truncate(%d) kept only %d tokens", max, o.Count(cut))
		}
	}
}
