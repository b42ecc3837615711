package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/internal/loadgen"
)

const benchUsage = "usage: contextd bench noop [--addr 127.0.0.1:8081] | contextd bench churn --addr 127.0.0.1:PORT [--rate 200] [--chats 200] [--prefix chat-] [--users 20] [--duration 0] | contextd bench load [--chats 1000] [--turns 200] [--clients 64] [--duration 20s] [--mix 0.8] [--budget 4000] [--strategy rag_augmented] [--rate 0] [--warmup 0] [--settle=true] [--addr 127.0.0.1:PORT] [--config agents.yaml] [--seed 1] [--long-turns] [--append-in-context] [--cpuprofile FILE] [--memprofile FILE] [--mutexprofile FILE]"

// cmdBench runs `contextd bench load`: the logic is in internal/loadgen;
// this wires flags and, without --addr, an in-process contextd.
func cmdBench(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "noop" {
		return cmdBenchNoop(ctx, args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "churn" {
		return cmdBenchChurn(ctx, args[1:], stdout)
	}
	if len(args) == 0 || args[0] != "load" {
		return usageError(benchUsage)
	}
	return cmdBenchLoad(ctx, args[1:], getenv, stdout)
}

// cmdBenchLoad is `contextd bench load`.
func cmdBenchLoad(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench load", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var o loadgen.Options
	fs.IntVar(&o.Chats, "chats", 1000, "chats to pre-load")
	fs.IntVar(&o.Turns, "turns", 200, "turns per chat, pre-loaded before measuring")
	fs.IntVar(&o.Batch, "batch", 50, "turns per pre-load request")
	fs.IntVar(&o.Clients, "clients", 64, "concurrent keep-alive clients")
	fs.DurationVar(&o.Duration, "duration", 20*time.Second, "measured time per target (contextd, then the no-op handler)")
	fs.Float64Var(&o.Mix, "mix", 0.8, "share of POST /v1/context among requests; the rest append 1-2 turns")
	fs.IntVar(&o.Budget, "budget", 4000, "budget_tokens of context requests")
	fs.StringVar(&o.Strategy, "strategy", "rag_augmented", "strategy of context requests")
	fs.Float64Var(&o.Rate, "rate", 0, "open loop: total requests/s on a fixed schedule (request i due at start + i/rate; latency from when due, p99.9 reported); 0 = closed loop, as fast as answers come")
	fs.DurationVar(&o.Warmup, "warmup", 0, "run the load this long before each measured phase without recording it (cold caches out of the tail)")
	fs.DurationVar(&o.IndexTimeout, "index-timeout", 15*time.Minute, "longest wait for the indexer backlog after the pre-load")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the generated corpus and request mix")
	fs.BoolVar(&o.LongTurns, "long-turns", false, "turns of 100-1,500 characters (default: 10-60 words)")
	fs.BoolVar(&o.AppendInContext, "append-in-context", false, "each context request stores the user's new turn and asks for messages, as the AI SDK middleware does (append + include [\"messages\"])")
	settle := fs.Bool("settle", true, "refresh every chat's summary after the pre-load, so contexts are measured in steady state (false: as right after a bulk import, summaries lagging)")
	addr := fs.String("addr", "", "target an already running contextd on loopback (default: start one in-process on 127.0.0.1:0 in a temp dir)")
	cfgPath := fs.String("config", "", "agents.yaml for the in-process contextd (storage and vector files go to a temp dir); default: built-in defaults")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured contextd phase to FILE (in-process only is meaningful)")
	memProfile := fs.String("memprofile", "", "write a heap profile to FILE at the end of the run, before the in-process contextd stops")
	mutexProfile := fs.String("mutexprofile", "", "write a mutex contention profile of the whole run to FILE")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.MixSet = true
	o.NoSettle = !*settle
	o.Progress = stdout
	if err := o.Check(); err != nil {
		return usageError("bench load: " + err.Error())
	}
	if *cpuProfile != "" {
		o.Profile = cpuProfiler(*cpuProfile, stdout)
	}

	if *cfgPath != "" && *addr != "" {
		return usageError("bench load: --config applies to the in-process server only, not with --addr")
	}
	if *mutexProfile != "" {
		prev := runtime.SetMutexProfileFraction(5)
		defer runtime.SetMutexProfileFraction(prev)
	}
	base := *addr
	if base != "" {
		if _, err := loadgen.BaseURL(base); err != nil {
			return usageError("bench load: " + err.Error())
		}
	} else {
		b, stop, err := startBenchServer(ctx, *cfgPath, getenv)
		if err != nil {
			return err
		}
		defer stop()
		base = b
		o.InProcess = true
	}
	rep, err := loadgen.Run(ctx, base, o)
	if err != nil {
		return fmt.Errorf("bench load: %w", err)
	}
	rep.Write(stdout)
	for _, p := range []struct{ name, path string }{{"heap", *memProfile}, {"mutex", *mutexProfile}} {
		if p.path == "" {
			continue
		}
		if err := writeProfile(p.name, p.path); err != nil {
			return fmt.Errorf("bench load: %s profile: %w", p.name, err)
		}
	}
	return nil
}

// cpuProfiler starts a CPU profile into path when called, and returns
// what stops it; a failure is reported on stdout and profiles nothing.
func cpuProfiler(path string, stdout io.Writer) func() func() {
	return func() func() {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(stdout, "cpuprofile: %v\n", err)
			return func() {}
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stdout, "cpuprofile: %v\n", err)
			_ = f.Close()
			return func() {}
		}
		return func() { pprof.StopCPUProfile(); _ = f.Close() }
	}
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// startBenchServer wires a contextd exactly as serve does (build,
// StartWorkers, the same http.Server settings) on 127.0.0.1:0, with its
// SQLite and vector files in a temp dir. Logs are formatted (their cost is
// part of a request) but discarded.
func startBenchServer(ctx context.Context, cfgPath string, getenv func(string) string) (string, func(), error) {
	cfg := config.Default()
	if cfgPath != "" {
		c, err := config.Load(cfgPath, getenv)
		if err != nil {
			return "", nil, fmt.Errorf("config %s: %w", cfgPath, err)
		}
		cfg = c
	}
	dir, err := os.MkdirTemp("", "contextd-bench-")
	if err != nil {
		return "", nil, err
	}
	cfg.Storage.SQLitePath = filepath.Join(dir, "contextd.db")
	cfg.Vector.EmbeddedPath = filepath.Join(dir, "vectors.db")
	log := newLogger(io.Discard, cfg.Server.LogLevel)

	app, err := build(ctx, cfg, log)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		app.Close()
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	srv := loadgen.NewServer(app.Handler)
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	workersDone := app.StartWorkers(workCtx)
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()

	stop := func() {
		shutCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
		<-served
		stopWork()
		select {
		case <-workersDone:
		case <-shutCtx.Done():
		}
		app.Close()
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "bench: remove %s: %v\n", dir, err)
		}
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// cmdBenchNoop serves the no-op handler (bare Echo, same routes, a tiny JSON
// answer) until ctx ends: the floor that make bench-http measures contextd
// against, in the same run.
func cmdBenchNoop(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench noop", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", "127.0.0.1:8081", "listen address (loopback)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: loadgen.NoopHandler(), ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(stdout, "no-op handler listening on http://%s\n", ln.Addr())
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// cmdBenchChurn appends one turn at a time to random chats at a steady rate
// until --duration passes or it is stopped (SIGINT/SIGTERM), then prints
// what it sent: the background load of make bench-http's churn mode.
func cmdBenchChurn(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench churn", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var o loadgen.ChurnOptions
	addr := fs.String("addr", "", "the contextd to append to (loopback)")
	fs.Float64Var(&o.Rate, "rate", 200, "turns/s in total, one turn per request")
	fs.IntVar(&o.Chats, "chats", 200, "chats appended to: <prefix>0 .. <prefix>(chats-1)")
	fs.StringVar(&o.ChatPrefix, "prefix", "chat-", "chat id prefix")
	fs.IntVar(&o.Users, "users", 20, "chat i belongs to user-<i mod users> (as make bench-http seeds them)")
	fs.IntVar(&o.Clients, "clients", 8, "concurrent senders")
	fs.DurationVar(&o.Duration, "duration", 0, "stop after this long (0: until stopped)")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the appended text and chat choice")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" || fs.NArg() > 0 {
		return usageError(benchUsage)
	}
	rep, err := loadgen.Churn(ctx, *addr, o)
	if err != nil {
		return usageError("bench churn: " + err.Error())
	}
	rep.Write(stdout)
	return nil
}
