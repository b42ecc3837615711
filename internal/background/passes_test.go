package background

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The bookkeeping's states, as a waiter and a request see them.
func TestPasses(t *testing.T) {
	var p Passes
	if !p.Pending() {
		t.Fatal("a job not running is pending")
	}
	p.Starting()
	c := p.Begin()
	p.End(c, nil)
	if p.Pending() {
		t.Fatal("a running job that served every kick is pending")
	}
	p.Kicked()
	if !p.Pending() {
		t.Fatal("an unserved kick is not pending")
	}
	done := make(chan bool)
	go func() { done <- p.Wait(context.Background()) }()
	select {
	case <-p.Hurry(): // the waiter hurries the gathering pass
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not hurry")
	}
	p.End(p.Begin(), nil)
	if !<-done {
		t.Fatal("Wait returned false after the pass that served the kick")
	}
	p.Kicked()
	p.SetErr(errors.New("index down"))
	p.End(p.Begin(), errors.New("index down"))
	if p.Wait(context.Background()) || !p.Pending() {
		t.Fatal("a failed pass serves its kicks")
	}
	p.SetErr(nil)
	p.Stopped()
	if p.Wait(context.Background()) || !p.Pending() {
		t.Fatal("a stopped job is waited for")
	}
}
