package extractive_test

import (
	"testing"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/summarizertest"
	"github.com/contextd/contextd/memory"
)

func TestConformance(t *testing.T) {
	summarizertest.Run(t, summarizertest.Options{New: func(*testing.T) memory.Summarizer { return extractive.New() }})
}
