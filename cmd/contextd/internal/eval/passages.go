package eval

import (
	"strings"

	"github.com/contextd/contextd/internal/tokens"
)

// DefaultPassageTokens is the passage size of the passage baseline: about
// the size contextd's index splits long turns at (rag, issue 20). Replace
// passages with the index's own splitter once it exists, so that the
// baseline and contextd cut alike.
const DefaultPassageTokens = 200

// passages splits a turn into passages of at most about maxTokens, on
// paragraph boundaries, keeping a fenced code block whole unless it alone
// is too long (then on lines); an overlong paragraph is cut at sentences,
// and an overlong sentence or line at token boundaries. A short turn is
// one passage.
func passages(text string, maxTokens int) []string {
	if maxTokens <= 0 {
		maxTokens = DefaultPassageTokens
	}
	if tokens.Count(text) <= maxTokens {
		return []string{text}
	}
	var out []string
	cur, used := "", 0
	flush := func() {
		if strings.TrimSpace(cur) != "" {
			out = append(out, strings.TrimSpace(cur))
		}
		cur, used = "", 0
	}
	for _, piece := range pieces(text, maxTokens) {
		n := tokens.Count(piece)
		if used > 0 && used+n > maxTokens {
			flush()
		}
		if cur != "" {
			cur += "\n\n"
		}
		cur += piece
		used += n
	}
	flush()
	return out
}

// pieces cuts text into blocks no longer than maxTokens each: paragraphs
// and fenced code blocks, the overlong ones cut further.
func pieces(text string, maxTokens int) []string {
	var out []string
	for _, b := range blocks(text) {
		if tokens.Count(b) <= maxTokens {
			out = append(out, b)
			continue
		}
		var parts []string
		if strings.HasPrefix(b, "```") {
			parts = strings.Split(b, "\n")
		} else {
			parts = sentences(b)
		}
		cur := ""
		for _, p := range parts {
			for tokens.Count(p) > maxTokens { // one overlong sentence or line
				head := tokens.Truncate(p, maxTokens)
				if head == "" {
					break
				}
				out = appendNonEmpty(out, cur)
				cur = ""
				out = append(out, head)
				p = p[len(head):]
			}
			sep := " "
			if strings.HasPrefix(b, "```") {
				sep = "\n"
			}
			if cur != "" && tokens.Count(cur+sep+p) > maxTokens {
				out = appendNonEmpty(out, cur)
				cur = ""
			}
			if cur != "" {
				cur += sep
			}
			cur += p
		}
		out = appendNonEmpty(out, cur)
	}
	return out
}

func appendNonEmpty(out []string, s string) []string {
	if strings.TrimSpace(s) == "" {
		return out
	}
	return append(out, s)
}

// blocks splits text on blank lines, keeping each fenced code block whole.
func blocks(text string) []string {
	var out []string
	var cur []string
	inCode := false
	flush := func() {
		if b := strings.TrimSpace(strings.Join(cur, "\n")); b != "" {
			out = append(out, b)
		}
		cur = nil
	}
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			if !inCode {
				flush()
				inCode = true
				cur = append(cur, line)
				continue
			}
			cur = append(cur, line)
			flush()
			inCode = false
			continue
		}
		if !inCode && trim == "" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}
