package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/contextd/contextd/cmd/contextd/internal/eval"
	"github.com/contextd/contextd/config"
)

func cmdEval(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "locomo" {
		return usageError("usage: contextd eval locomo --data FILE [--budgets 1000,2000,4000,8000] [--config agents.yaml]")
	}
	fs := flag.NewFlagSet("eval locomo", flag.ContinueOnError)
	fs.SetOutput(stdout)
	data := fs.String("data", "", "path to the LoCoMo JSON file (e.g. ../shared/bench/locomo/locomo-dev.json)")
	budgets := fs.String("budgets", "1000,2000,4000,8000", "comma-separated token budgets")
	cfgPath := fs.String("config", "", "agents.yaml whose supervisor memory settings, embedder and vector driver to use (default: built-in defaults)")
	strategy := fs.String("strategy", "rag_augmented", "strategy to evaluate")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *data == "" {
		return usageError("eval locomo: --data FILE is required")
	}
	var bs []int
	for _, f := range strings.Split(*budgets, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return usageError(fmt.Sprintf("eval locomo: bad budget %q", f))
		}
		bs = append(bs, n)
	}
	base := config.Default()
	if *cfgPath != "" {
		c, err := config.Load(*cfgPath, getenv)
		if err != nil {
			return fmt.Errorf("config %s: %w", *cfgPath, err)
		}
		base = c
	}
	convs, err := eval.LoadLoCoMo(*data)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "contextd-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rep, err := eval.Run(ctx, convs, evalSystem(base), eval.Options{Budgets: bs, Strategy: *strategy, TempDir: tmp, Progress: stdout})
	if err != nil {
		return err
	}
	rep.Write(stdout)
	return nil
}

// evalSystem builds a fresh contextd per conversation from the base config,
// with embedded storage in its own directory and no LLM (the protocol is
// LLM-free). The vector driver is the config's (embedded or qdrant).
func evalSystem(base *config.Config) eval.NewSystem {
	return func(ctx context.Context, dir string) (*eval.System, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		cfg := *base
		cfg.Storage = config.Storage{Driver: "sqlite", SQLitePath: filepath.Join(dir, "contextd.db")}
		cfg.Vector.EmbeddedPath = filepath.Join(dir, "vectors.db")
		cfg.LLM = config.LLM{Provider: "none"}
		app, err := build(ctx, &cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		// Summaries first: closing them makes episodes, which the indexer
		// then indexes with the turns, as a running server converges to.
		drain := func(ctx context.Context) error {
			var errs []error
			if app.Worker != nil {
				errs = append(errs, app.Worker.Drain(ctx))
			}
			if app.Indexer != nil {
				if _, err := app.Indexer.DrainOnce(ctx); err != nil {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		}
		return &eval.System{Service: app.Service, Drain: drain, Close: app.Close}, nil
	}
}
