package api

import "testing"

func TestKnownHost(t *testing.T) {
	allowed := []string{"contextd-1", "contextd", ".internal"}
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"", true},
		{"localhost:8080", true},
		{"LOCALHOST", true},
		{"app.localhost:8080", true},
		{"127.0.0.1:8080", true},
		{"10.1.2.3", true},
		{"[::1]:8080", true},
		{"[2001:db8::1]", true},
		{"contextd:8080", true},
		{"contextd.", true},
		{"Contextd-1", true},
		{"db.internal:80", true},
		{"internal", true},
		{"evil.example:8080", false},
		{"evil.example", false},
		{"localhost.evil.example", false},
		{"contextd.evil.example", false},
		{"evilinternal", false},
	} {
		if got := knownHost(c.host, allowed); got != c.ok {
			t.Errorf("knownHost(%q) = %v, want %v", c.host, got, c.ok)
		}
	}
}
