package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBenchLoadTiny runs the whole `contextd bench load` (in-process
// contextd, pre-load, indexer wait, contextd and no-op phases) on a tiny
// corpus and checks the report's rows. No timing asserts.
func TestBenchLoadTiny(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, []string{"bench", "load", "--chats", "3", "--turns", "20", "--clients", "4", "--duration", "1s", "--seed", "5"},
		func(string) string { return "" }, &out)
	if err != nil {
		t.Fatalf("bench load: %v\n%s", err, out.String())
	}
	report := out.String()
	if !strings.Contains(report, "pre-load: 60 turns in 3 requests (0 errors)") {
		t.Errorf("pre-load line missing or wrong:\n%s", report)
	}
	if strings.Contains(report, "gave up after") {
		t.Errorf("indexer backlog did not drain:\n%s", report)
	}
	// target, route (two words), requests, errors, req/s, p50, p95, p99, p99.9, max
	rowRe := regexp.MustCompile(`(?m)^\s*(contextd|no-op)\s+(POST /v1/context|POST /v1/chats/\{id\}/messages|all)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+ms)\s+([\d.]+ms)\s+([\d.]+ms)\s+([\d.]+ms)\s+([\d.]+ms)\s*$`)
	rows := map[string][2]int{}
	for _, m := range rowRe.FindAllStringSubmatch(report, -1) {
		reqs, _ := strconv.Atoi(m[3])
		errs, _ := strconv.Atoi(m[4])
		rows[m[1]+" "+m[2]] = [2]int{reqs, errs}
	}
	for _, target := range []string{"contextd", "no-op"} {
		for _, route := range []string{"POST /v1/context", "POST /v1/chats/{id}/messages", "all"} {
			r, ok := rows[target+" "+route]
			if !ok {
				t.Errorf("no row for %s %s in:\n%s", target, route, report)
				continue
			}
			if r[0] == 0 || r[1] != 0 {
				t.Errorf("%s %s: %d requests, %d errors; want > 0 and 0", target, route, r[0], r[1])
			}
		}
	}
	for _, want := range []string{"ratio contextd/no-op, POST /v1/context: p99 x", "peak RSS", "over budget 0", "load average"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// TestBenchLoadOpenLoop: --rate sends on a schedule and says so, per
// target, with p99.9 in the table. No timing asserts.
func TestBenchLoadOpenLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, []string{"bench", "load", "--chats", "2", "--turns", "10", "--clients", "4", "--duration", "1s", "--rate", "30", "--warmup", "200ms", "--seed", "6"},
		func(string) string { return "" }, &out)
	if err != nil {
		t.Fatalf("bench load --rate: %v\n%s", err, out.String())
	}
	report := out.String()
	for _, want := range []string{"open loop at 30 req/s after 200ms of warmup (not recorded)", "p99.9", "open loop, contextd: 30 requests due at 30 req/s,", "open loop, no-op: 30 requests due at 30 req/s,", "sent late by p50"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench"},
		{"bench", "flood"},
		{"bench", "load", "--addr", "10.1.2.3:8080", "--chats", "1"},
		{"bench", "load", "--addr", "127.0.0.1:1", "--config", "x.yaml"},
		{"bench", "load", "--mix", "1.5"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), args, func(string) string { return "" }, &out)
		if err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
}
