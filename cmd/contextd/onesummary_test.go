package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// One summary: right after a bulk append (the worker has stored nothing
// yet), GET …/summary answers the summary a context that does not fit
// shows — the preview computed in the request, marked "preview": true —
// not null.
func TestSummaryAnswersWhatTheContextShows(t *testing.T) {
	_, srv := newApp(t, nil)
	var msgs []string
	for i := 1; i <= 120; i++ {
		role := []string{"user", "assistant"}[i%2]
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":"Turn %d: we compared the ferry timetable to Porto with the train, and the hotel near the harbour for day %d."}`, role, i, i%9))
	}
	if st, b := call(t, "POST", srv.URL+"/v1/chats/bulk/messages", "", `{"user_id":"u","messages":[`+strings.Join(msgs, ",")+`]}`); st != 201 {
		t.Fatalf("append: %d %s", st, b)
	}
	type summary struct {
		Narrative    string   `json:"narrative"`
		Topics       []string `json:"topics"`
		CoveredToSeq int64    `json:"covered_to_seq"`
	}
	var got struct {
		Summary  *summary          `json:"summary"`
		Chain    []json.RawMessage `json:"chain"`
		Episodes []json.RawMessage `json:"episodes"`
		Preview  *bool             `json:"preview"`
	}
	st, b := call(t, "GET", srv.URL+"/v1/chats/bulk/summary", "", "")
	if st != 200 || json.Unmarshal([]byte(b), &got) != nil {
		t.Fatalf("summary: %d %s", st, b)
	}
	var ctx struct {
		Sections struct {
			Summary *summary `json:"summary"`
		} `json:"sections"`
	}
	st, cb := call(t, "POST", srv.URL+"/v1/context", "", `{"chat_id":"bulk","strategy":"running_summary","budget_tokens":300}`)
	if st != 200 || json.Unmarshal([]byte(cb), &ctx) != nil {
		t.Fatalf("context: %d %s", st, cb)
	}
	if ctx.Sections.Summary == nil {
		t.Fatalf("the 300-token context shows no summary: %s", cb)
	}
	if got.Summary == nil || got.Preview == nil || !*got.Preview {
		t.Fatalf("GET …/summary right after the append: %s; want the preview the context shows", b)
	}
	if got.Summary.CoveredToSeq != ctx.Sections.Summary.CoveredToSeq || got.Summary.Narrative != ctx.Sections.Summary.Narrative {
		t.Errorf("GET …/summary covers to %d (%q), the context's to %d (%q)", got.Summary.CoveredToSeq, got.Summary.Narrative,
			ctx.Sections.Summary.CoveredToSeq, ctx.Sections.Summary.Narrative)
	}
	if got.Chain == nil || got.Episodes == nil {
		t.Errorf("existing fields lost: %s", b)
	}
}
