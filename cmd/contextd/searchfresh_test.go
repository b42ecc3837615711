package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSearchSeesItsAppendsThroughBinary: while other chats stream appends
// (the indexer busy, the kicks that come during its passes gathered for
// its MinInterval), a search right after an append finds the turn that
// append stored, every time: the search waits for the indexer, briefly,
// instead of answering from an index that has not taken the turn in yet.
func TestSearchSeesItsAppendsThroughBinary(t *testing.T) {
	s := startBinary(t, sqliteStorage+"\n")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body, _ := json.Marshal(map[string]any{"messages": []map[string]string{
					{"role": "user", "content": fmt.Sprintf("background turn %d about the weather in town", i)}}})
				resp, err := client.Post(fmt.Sprintf("%s/v1/chats/bg%d-%d/messages", s.base, w, i%20), "application/json", bytes.NewReader(body))
				if err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(300 * time.Millisecond) // the stream under way
	for i := range 40 {
		word := fmt.Sprintf("zephyr%03dq", i)
		s.must(201, "POST", "/v1/chats/rw/messages", map[string]any{"messages": []map[string]string{
			{"role": "user", "content": "the code word of round " + fmt.Sprint(i) + " is " + word}}}, nil)
		var res struct {
			Hits []struct {
				Content string `json:"content"`
			} `json:"hits"`
		}
		s.must(200, "POST", "/v1/search", map[string]any{"query": word, "chat_id": "rw", "kinds": []string{"turn"}, "k": 3}, &res)
		if len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Content, word) {
			t.Errorf("round %d: a search right after the append did not find %q: %+v", i, word, res.Hits)
		}
	}
}
