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
	"time"

	"github.com/contextd/contextd/cmd/contextd/internal/eval"
	"github.com/contextd/contextd/config"
)

const evalUsage = `usage: contextd eval locomo --data FILE [--llm none|replay] [--budgets 1000,2000,4000,8000] [--diagnose] [--retrieval] [--limit N] [--config agents.yaml]
       contextd eval beam --data DIR [--budgets 2000,8000] [--passage-tokens 200] [--diagnose] [--retrieval] [--limit N] [--config agents.yaml]
       contextd eval scenarios [--only ID] [--details N] [--show-context] [--config agents.yaml]`

func cmdEval(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "scenarios" {
		return evalScenarios(ctx, args[1:], getenv, stdout)
	}
	if len(args) == 0 || (args[0] != "locomo" && args[0] != "beam") {
		return usageError(evalUsage)
	}
	bench := args[0]
	fs := flag.NewFlagSet("eval "+bench, flag.ContinueOnError)
	fs.SetOutput(stdout)
	dataHelp := "path to the LoCoMo JSON file (LoCoMo's data/locomo10.json, see docs/evaluation.md)"
	defBudgets := "1000,2000,4000,8000"
	if bench == "beam" {
		dataHelp, defBudgets = "BEAM chats directory (e.g. data/beam/100K, holding <n>/chat.json and <n>/probing_questions/)", "2000,8000"
	}
	data := fs.String("data", "", dataHelp)
	budgets := fs.String("budgets", defBudgets, "comma-separated token budgets")
	cfgPath := fs.String("config", "", "agents.yaml whose supervisor memory settings, embedder and vector driver to use (default: built-in defaults)")
	strategy := fs.String("strategy", "rag_augmented", "strategy to evaluate")
	llm := fs.String("llm", "none", "none: no LLM (the LLM-free protocol); replay: summarise with the replay LLM over LoCoMo's own observations and session summaries (locomo only)")
	limit := fs.Int("limit", 0, "evaluate only the first N conversations (0: all)")
	diagnose := fs.Bool("diagnose", false, "add the loss breakdown: where each evidence message was lost first (never retrieved, retrieved and not packed, packed)")
	passageTokens := fs.Int("passage-tokens", eval.DefaultPassageTokens, "passage size of the bm25-passages baseline (beam)")
	retrieval := fs.Bool("retrieval", false, "measure retrieval alone: evidence recall@5/10/20/50/100/200 of the ranked turns: dense, sparse, fused as /v1/context runs it, fused without the similarity threshold (no budgets, no packing)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *data == "" {
		return usageError(fmt.Sprintf("eval %s: --data is required", bench))
	}
	if *llm != "none" && *llm != "replay" {
		return usageError(fmt.Sprintf("eval %s: --llm must be none or replay, not %q", bench, *llm))
	}
	if *llm == "replay" && bench != "locomo" {
		return usageError("eval beam: --llm replay needs LoCoMo's observations; BEAM has none")
	}
	bs, err := parseBudgets(*budgets)
	if err != nil {
		return usageError(fmt.Sprintf("eval %s: %v", bench, err))
	}
	base, err := evalConfig(*cfgPath, getenv)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "contextd-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	opts := eval.Options{Budgets: bs, Strategy: *strategy, TempDir: tmp, Progress: stdout, Replay: *llm == "replay", PassageTokens: *passageTokens, Diagnose: *diagnose}
	if *retrieval {
		return evalRetrieval(ctx, bench, *data, *limit, evalSystem(base), opts, stdout)
	}
	rep, err := runBenchmark(ctx, bench, *data, *limit, evalSystem(base), opts)
	if err != nil {
		return err
	}
	rep.Write(stdout)
	return nil
}

// evalConfig is the config the eval builds its systems from: path's, or
// the built-in defaults when path is "".
func evalConfig(path string, getenv func(string) string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	c, err := config.Load(path, getenv)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// runBenchmark loads bench's data (the first limit conversations when
// limit > 0) and evaluates it.
func runBenchmark(ctx context.Context, bench, data string, limit int, sys eval.NewSystem, opts eval.Options) (*eval.Report, error) {
	if bench == "beam" {
		chats, err := eval.LoadBEAM(data)
		if err != nil {
			return nil, err
		}
		if limit > 0 && limit < len(chats) {
			chats = chats[:limit]
		}
		return eval.RunBEAM(ctx, chats, sys, opts)
	}
	convs, err := eval.LoadLoCoMo(data)
	if err != nil {
		return nil, err
	}
	if limit > 0 && limit < len(convs) {
		convs = convs[:limit]
	}
	return eval.Run(ctx, convs, sys, opts)
}

func parseBudgets(s string) ([]int, error) {
	var bs []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad budget %q: want a positive number of tokens", f)
		}
		bs = append(bs, n)
	}
	return bs, nil
}

const evalMaxMessageBytes = 8 << 20

// evalSystem builds a fresh contextd per conversation from the base config,
// with embedded storage in its own directory, and either no LLM (the
// LLM-free protocol) or the OpenAI-compatible endpoint the spec names (the
// replay LLM). The vector driver is the config's (embedded or qdrant).
func evalSystem(base *config.Config) eval.NewSystem {
	return func(ctx context.Context, spec eval.Spec) (*eval.System, error) {
		if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
			return nil, err
		}
		cfg := *base
		cfg.Storage = config.Storage{Driver: "sqlite", SQLitePath: filepath.Join(spec.Dir, "contextd.db")}
		cfg.Vector.EmbeddedPath = filepath.Join(spec.Dir, "vectors.db")
		// The eval ingests a dataset as it is: BEAM 100K chat 4 holds one
		// 349 KB message (mostly trailing blanks) that the API's default
		// per-message cap would refuse.
		cfg.Server.MaxMessageBytes = max(cfg.Server.MaxMessageBytes, evalMaxMessageBytes)
		cfg.LLM = config.LLM{Provider: "none"}
		if spec.LLMBaseURL != "" {
			cfg.LLM = config.LLM{Provider: "openai", BaseURL: spec.LLMBaseURL, Model: "replay", APIKey: "replay", Timeout: time.Minute}
		}
		app, err := build(ctx, &cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		sys := &eval.System{Service: app.Service, Drain: func(ctx context.Context) error { return settle(ctx, app) }, Close: app.Close,
			Probe: retrievalProbe(app)}
		if app.Retriever != nil { // not a typed nil in the interface
			sys.Retriever = app.Retriever
		}
		return sys, nil
	}
}

// settle runs the background work a running server would have finished
// before the question: summaries and episodes first (closing them makes
// the episodes the indexer then indexes with the turns), then the users'
// profiles (merged from the summaries, cooldowns ignored), then the facts
// drawn on arrival, then indexing; again until a round finds nothing left
// to index. (Without the facts job's drain the answers lacked the turns'
// facts, and said index_behind.)
func settle(ctx context.Context, app *App) error {
	for round := 0; round < 5; round++ {
		var errs []error
		if app.Worker != nil {
			errs = append(errs, app.Worker.Drain(ctx))
		}
		if app.Profiler != nil {
			if _, err := app.Profiler.Pass(ctx, true); err != nil {
				errs = append(errs, err)
			}
		}
		if app.Arrivals != nil {
			if _, err := app.Arrivals.DrainOnce(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		n := 0
		if app.Indexer != nil {
			var err error
			if n, err = app.Indexer.DrainOnce(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil || n == 0 {
			return err
		}
	}
	return nil
}
