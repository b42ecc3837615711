package extractive_test

import (
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/extractive"
	"github.com/contextd/contextd/memory/summarizertest"
)

func TestConformance(t *testing.T) {
	summarizertest.Run(t, summarizertest.Options{New: func(*testing.T) memory.Summarizer { return extractive.New() }})
}
