package llmsum

import (
	"sync"
	"testing"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/derive/summarizertest"
	"github.com/contextd/contextd/memory"
)

// TestConformance runs the summarizer suite over a scripted LLM; Seen hands
// the suite every prompt the model received, so it can check that an
// extension never re-sends covered turns.
func TestConformance(t *testing.T) {
	var (
		mu   sync.Mutex
		srv  *llmtest.Server
		read int
	)
	summarizertest.Run(t, summarizertest.Options{
		New: func(t *testing.T) memory.Summarizer {
			mu.Lock()
			defer mu.Unlock()
			// episodeJSON holds every summary field and the episode's short.
			srv, read = llmtest.New(t, llmtest.Always(llmtest.Reply{Content: episodeJSON})), 0
			return newSum(t, srv, Options{Fallback: extractive.New()})
		},
		Seen: func() []string {
			mu.Lock()
			defer mu.Unlock()
			reqs := srv.Requests()
			var out []string
			for _, r := range reqs[read:] {
				for _, m := range r.Messages {
					out = append(out, m.Content)
				}
			}
			read = len(reqs)
			return out
		},
	})
}
