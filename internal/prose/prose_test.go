package prose

import (
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

func TestRead(t *testing.T) {
	cases := []struct {
		name   string
		msg    memory.Message
		who    string
		person bool
		body   string
	}{
		{"prefix on a user turn", memory.Message{Role: "user", Content: "Caroline: I went to a support group."}, "Caroline", true, "I went to a support group."},
		{"prefix on an assistant turn is a person", memory.Message{Role: "assistant", Content: "Nate: I adopted a puppy."}, "Nate", true, "I adopted a puppy."},
		{"assistant name alone is not a person", memory.Message{Role: "assistant", Name: "helper", Content: "I fixed it."}, "helper", false, "I fixed it."},
		{"name field and the same prefix", memory.Message{Role: "user", Name: "Joanna", Content: "Joanna: hi there"}, "Joanna", true, "hi there"},
		{"name field and a different prefix", memory.Message{Role: "user", Name: "Joanna", Content: "Nate: hi"}, "Joanna", true, "Nate: hi"},
		{"two-word name", memory.Message{Role: "user", Content: "Mary Ann: hello"}, "Mary Ann", true, "hello"},
		{"label is not a speaker", memory.Message{Role: "user", Content: "Decision: cutover on June 15"}, "", true, "Decision: cutover on June 15"},
		{"acknowledgement is not a speaker", memory.Message{Role: "assistant", Content: "Updated: Flat B, Joanna Kim, £950/month."}, "", false, "Updated: Flat B, Joanna Kim, £950/month."},
		{"a topic label is not a speaker", memory.Message{Role: "user", Content: "Food: I'm vegetarian."}, "", true, "Food: I'm vegetarian."},
		{"an email's header is not a speaker", memory.Message{Role: "assistant", Content: "Subject: Invoice 014, overdue\n\nDear Ana, I have attached it again."}, "", false, "Subject: Invoice 014, overdue\n\nDear Ana, I have attached it again."},
		{"nor is its addressee line", memory.Message{Role: "assistant", Content: "To: ap@northwind.example\nI would love to continue."}, "", false, "To: ap@northwind.example\nI would love to continue."},
		{"raw role label is dropped", memory.Message{Role: "assistant", Content: "Assistant: done"}, "", false, "done"},
		{"no prefix", memory.Message{Role: "user", Content: "I prefer tea: green"}, "", true, "I prefer tea: green"},
		{"lowercase is not a name", memory.Message{Role: "user", Content: "note: x"}, "", true, "note: x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Read(c.msg)
			if got.Speaker.Name != c.who || got.Speaker.Person != c.person || got.Body != c.body {
				t.Fatalf("Read = %+v, want name %q person %v body %q", got, c.who, c.person, c.body)
			}
		})
	}
}

func TestCleanAndIsProse(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		prose []string // sentences that must survive as prose
		gone  []string // substrings no prose sentence may hold
	}{
		{"display latex", `Use the identity: \[ \tan 2x = \frac{2\tan x}{1-\tan^2 x} \] and solve it for every x.`, []string{"Use the identity:", "and solve it for every x."}, []string{"frac", "tan"}},
		{"inline latex", `The solutions are $\frac{\pi}{8}$ and more. We checked them all carefully.`, []string{"We checked them all carefully."}, []string{"solutions are"}},
		{"simple inline math kept", `With $h = 0.5$ the method is unstable here.`, []string{"With h = 0.5 the method is unstable here."}, nil},
		{"fenced code", "Run this:\n```python\nimport numpy as np\nprint(np.sin(x))\n```\nIt prints the sine values.", []string{"It prints the sine values."}, []string{"numpy", "print("}},
		{"table", "Here are the results:\n| k | x |\n|---|---|\n| 0 | pi/8 |\nThat covers all four cases.", []string{"That covers all four cases."}, []string{"pi/8", "| k"}},
		{"markup kept as text", "## Plan for the week\n- **Book** the hotel in Lisbon\n- Call [the agency](https://x.example/a) tomorrow morning", []string{"Plan for the week", "Book the hotel in Lisbon", "Call the agency tomorrow morning"}, []string{"##", "**", "https"}},
		{"url leaves a hole", "The docs are at https://example.com/docs for reference.", nil, []string{"docs are at"}},
		{"html", "I <b>really</b> like the new layout a lot.", []string{"I really like the new layout a lot."}, []string{"<b>"}},
		{"code line without fence", "x = np.linspace(0, 1); y = f(x)", nil, []string{"linspace"}},
		{"ellipsis pile-up", "Well…… I guess... we will see tomorrow then.", []string{"we will see tomorrow then."}, []string{"……", "..."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, s := range lex.Sentences(Clean(c.in)) {
				if IsProse(s) {
					got = append(got, s)
				}
			}
			joined := strings.Join(got, " | ")
			for _, w := range c.prose {
				found := false
				for _, g := range got {
					if strings.Contains(g, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("missing prose %q in %q", w, joined)
				}
			}
			for _, w := range c.gone {
				if strings.Contains(joined, w) {
					t.Errorf("%q survived in %q", w, joined)
				}
			}
		})
	}
}

func TestShares(t *testing.T) {
	got := Shares("```go\nfunc main() {}\n```\nsee https://go.dev and $\\frac{1}{2}$")
	want := []string{KindCode, KindFormula, KindLink}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Shares = %q, want %q", got, want)
	}
}

func TestApostrophes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"btw i dont eat meat", "btw i don't eat meat"},
		{"Im vegetarian, ive been for years", "I'm vegetarian, i've been for years"},
		{"we cant, it wont fit and thats that", "we can't, it won't fit and that's that"},
		{"youre right, theyre late, shes here", "you're right, they're late, she's here"},
		{"DIDNT see it", "DIDN'T see it"},
		// Words of their own stay: ill, id, were, its, well, lets, hell.
		{"i was ill, its id were lost, well it lets you", "i was ill, its id were lost, well it lets you"},
		{"don't and I'm stay", "don't and I'm stay"},
		{"imagine dontcha intact", "imagine dontcha intact"},
		{"x_dont dont_x 2dont dont's", "x_dont dont_x 2dont dont's"},
		{"dont", "don't"},
		{"ok.im here", "ok.i'm here"},
	} {
		if got := Apostrophes(c.in); got != c.want {
			t.Errorf("Apostrophes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Apostrophes only ever inserts apostrophes.
func FuzzApostrophes(f *testing.F) {
	f.Add("btw i dont eat meat, im vegetarian and ive been for years")
	f.Add("Thats what SHES saying: youre late")
	f.Fuzz(func(t *testing.T, in string) {
		out := Apostrophes(in)
		if strings.ReplaceAll(out, "'", "") != strings.ReplaceAll(in, "'", "") {
			t.Fatalf("Apostrophes(%q) = %q: more than apostrophes changed", in, out)
		}
		if !strings.Contains(in, "'") && strings.Count(out, "'") > len(in)/2 {
			t.Fatalf("Apostrophes(%q) = %q: too many", in, out)
		}
	})
}

func TestSentenceCase(t *testing.T) {
	for in, want := range map[string]string{
		"rob will come":    "Rob will come",
		"éclairs are done": "Éclairs are done",
		"👍 Rob will come":  "👍 Rob will come", // upper-casing a byte of it made invalid UTF-8
		"Already upper":    "Already upper",
		"":                 "",
		"42 is the answer": "42 is the answer",
		"ßtraße":           "ßtraße", // no single upper rune: left as is
	} {
		if got := SentenceCase(in); got != want {
			t.Errorf("SentenceCase(%q) = %q, want %q", in, got, want)
		}
	}
}
