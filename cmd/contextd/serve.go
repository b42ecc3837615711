package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/internal/dirlock"
)

// loadConfig reads --config, else ./agents.yaml, else built-in defaults; a
// bad config is reported in one line (check-config prints every problem).
func loadConfig(path string, getenv func(string) string) (*config.Config, string, error) {
	cfg, src, err := config.Open(path, getenv)
	if src == "" {
		src = "built-in defaults"
	}
	if err != nil {
		var ce *config.Errors
		if errors.As(err, &ce) {
			return nil, src, errors.New(ce.Summary())
		}
		return nil, src, err
	}
	return cfg, src, nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	return slog.New(jsonHandler(w, level))
}

func jsonHandler(w io.Writer, level string) slog.Handler {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})
}

// newBufferedLogger logs through a logSink on w (see logSink).
func newBufferedLogger(w io.Writer, level string) (*slog.Logger, *logSink) {
	sink := newLogSink(w, logSinkDelay)
	return slog.New(flushOnWarn{jsonHandler(sink, level), sink}), sink
}

func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stdout)
	cfgPath := fs.String("config", "", "path to agents.yaml (default ./agents.yaml, else built-in defaults)")
	pprofAddr := fs.String("pprof", "", "serve Go's pprof endpoints on this address (e.g. 127.0.0.1:6060) for profiling under load; off by default")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, src, err := loadConfig(*cfgPath, getenv)
	if err != nil {
		return fmt.Errorf("config %s: %w", src, err)
	}
	log, sink := newBufferedLogger(stdout, cfg.Server.LogLevel)
	defer sink.Flush()
	// serve's own lines go through the sink too, flushed at once, so they
	// keep their place among the log's.
	stdout = flushing{sink}
	for _, w := range cfg.Warnings {
		log.Warn("config", "warning", w)
	}

	release, err := lockDataDir(cfg)
	if err != nil {
		return err
	}
	defer release()
	app, err := build(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer app.Close()

	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Server.Addr, err)
	}
	srv := &http.Server{
		Handler:           app.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	fmt.Fprintf(stdout, "contextd %s listening on http://%s (config: %s; storage: %s; vector: %s; llm: %s)\n",
		version, displayAddr(ln.Addr()), src, cfg.Storage.Driver, cfg.Vector.Driver, cfg.LLM.Provider)

	if *pprofAddr != "" {
		stopPprof, err := servePprof(*pprofAddr)
		if err != nil {
			return err
		}
		defer stopPprof()
		fmt.Fprintf(stdout, "pprof on http://%s/debug/pprof/\n", *pprofAddr)
	}

	return runServer(ctx, app, srv, ln, getenv, log)
}

// lockDataDir takes the embedded store's data directory for this process
// (dirlock): a second serve on it would start and split the work
// silently. Postgres is shared by design and takes no lock, and neither
// does an in-memory or file: URI database.
func lockDataDir(cfg *config.Config) (release func(), err error) {
	p := cfg.Storage.SQLitePath
	if cfg.Storage.Driver == "postgres" || p == ":memory:" || strings.HasPrefix(p, "file:") {
		return func() {}, nil
	}
	l, err := dirlock.Acquire(filepath.Dir(p))
	if err != nil {
		return nil, fmt.Errorf("storage sqlite %s: %w", p, err)
	}
	return func() { _ = l.Release() }, nil
}

// runServer serves on ln with the background workers beside it until ctx
// ends (SIGTERM), then stops accepting, drains in-flight requests, then
// background work, each with a deadline.
func runServer(ctx context.Context, app *App, srv *http.Server, ln net.Listener, getenv func(string) string, log *slog.Logger) error {
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	workersDone := app.StartWorkers(workCtx)
	keepGCPacing(workCtx, getenv, defaultMemoryLimit, log)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		stopWork()
		<-workersDone
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: draining requests and background work")
	shutCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err)
	}
	stopWork()
	select {
	case <-workersDone:
	case <-shutCtx.Done():
		log.Warn("background work did not stop in time; leases expire and another worker resumes it")
	}
	log.Info("stopped")
	return nil
}

// flushing writes through a logSink and flushes it.
type flushing struct{ sink *logSink }

func (f flushing) Write(p []byte) (int, error) {
	n, err := f.sink.Write(p)
	if err == nil {
		err = f.sink.Flush()
	}
	return n, err
}

func displayAddr(a net.Addr) string {
	s := a.String()
	if strings.HasPrefix(s, "[::]:") {
		return "localhost:" + strings.TrimPrefix(s, "[::]:")
	}
	if strings.HasPrefix(s, "0.0.0.0:") {
		return "localhost:" + strings.TrimPrefix(s, "0.0.0.0:")
	}
	return s
}

func cmdCheckConfig(args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check-config", flag.ContinueOnError)
	fs.SetOutput(stdout)
	cfgPath := fs.String("config", "", "path to agents.yaml (default ./agents.yaml)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ok, report := config.Check(*cfgPath, getenv)
	fmt.Fprintln(stdout, report)
	if !ok {
		return errors.New("config has problems")
	}
	return nil
}

func cmdMigrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stdout)
	cfgPath := fs.String("config", "", "path to agents.yaml")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, store, err := configuredStore(ctx, *cfgPath, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(stdout, "migrations applied (%s)\n", cfg.Storage.Driver)
	return nil
}

// servePprof serves net/http/pprof's handlers on their own listener and
// mux, never on the API's.
func servePprof(addr string) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof listen on %s: %w", addr, err)
	}
	// Block and mutex events are sampled only while profiling is on: a
	// tail latency is often a wait, not CPU. One blocking event in about
	// every 10µs of blocked time, one contended unlock in 10.
	runtime.SetBlockProfileRate(10_000)
	runtime.SetMutexProfileFraction(10)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
