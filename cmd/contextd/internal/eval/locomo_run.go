package eval

import (
	"context"
	"strconv"
)

// Run evaluates LoCoMo conversations: each is ingested into a fresh
// system, every question is asked at every budget, beside the baselines.
func Run(ctx context.Context, convs []Conversation, newSystem NewSystem, o Options) (*Report, error) {
	samples := make([]*sample, 0, len(convs))
	for _, c := range convs {
		samples = append(samples, locomoSample(c, o.Replay))
	}
	return run(ctx, locomoDataset, samples, newSystem, o)
}

// locomoSample is the protocol's ingestion: speaker A is the user, B the
// assistant, a turn's text "<speaker>: <text>" dated by its session.
func locomoSample(c Conversation, replay bool) *sample {
	s := &sample{id: c.SampleID, obs: c.Observations}
	for _, ses := range c.Sessions {
		for _, t := range ses.Turns {
			role := "user"
			if t.Speaker == c.SpeakerB {
				role = "assistant"
			}
			s.turns = append(s.turns, sampleTurn{id: t.DiaID, role: role, text: TurnText(t), at: ses.Date})
		}
	}
	for _, q := range c.QA {
		s.questions = append(s.questions, sampleQuestion{text: q.Question, answer: q.Answer, evidence: q.Evidence, cat: strconv.Itoa(q.Category)})
	}
	if replay {
		s.newReplay = func() *Replay { return NewReplay(c) }
	}
	return s
}

var locomoDataset = dataset{
	name:     "LoCoMo",
	cats:     []string{"1", "2", "3", "4", "5"},
	headline: func(cat string) bool { return cat != "5" },
	label:    "1-4",
	aside:    "5",
	baselines: func(s *sample, kept []sampleTurn, o Options) []baseline {
		turns := turnCorpus(kept)
		out := []baseline{{name: sysBM25, corpus: turns}, {name: sysBM25Dated, corpus: turns, dated: true}}
		if o.Replay {
			out = append(out, baseline{name: sysBM25Obs, corpus: observationCorpus(kept, s.obs), dated: true})
		}
		return append(out, baseline{name: sysRecency, corpus: turns, recent: true})
	},
}
