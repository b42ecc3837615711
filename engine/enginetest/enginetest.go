// Package enginetest gives tests outside the engine a service on one
// backend: every store role is the backend's, and the summary worker is
// one that does nothing (the service then shows the stored summaries, as
// one whose worker has not run yet).
package enginetest

import (
	"context"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory"
)

// SummaryJobs is a summary worker that never summarises and previews
// nothing.
type SummaryJobs struct{}

var (
	_ engine.SummaryJobs = SummaryJobs{}
	_ engine.Previewer   = SummaryJobs{}
)

// Extend leaves the chat's summary as it is.
func (SummaryJobs) Extend(context.Context, memory.ChatKey, bool) (*memory.SummaryRecord, []string, error) {
	return nil, nil, nil
}

// Kick does nothing.
func (SummaryJobs) Kick() {}

// InlineFor: nothing is extended, inline or not.
func (SummaryJobs) InlineFor(string) bool { return false }

// LastDegraded: no fallback was taken.
func (SummaryJobs) LastDegraded(memory.ChatKey) []string { return nil }

// Stale: no summary is written, so none with other prompts.
func (SummaryJobs) Stale(string, *memory.SummaryRecord) bool { return false }

// Preview has no extension to show.
func (SummaryJobs) Preview(context.Context, memory.Chat, *memory.SummaryRecord) (*memory.SummaryRecord, error) {
	return nil, nil
}

// Deps is engine.BackendDeps(b) with Summaries as the summary worker.
func Deps(b memory.Backend) engine.Deps {
	d := engine.BackendDeps(b)
	d.SummaryJobs, d.Previews = SummaryJobs{}, SummaryJobs{}
	return d
}

// New is a service on b (Deps), no retrieval and no background job.
func New(b memory.Backend) *engine.Service { return engine.New(Deps(b)) }
