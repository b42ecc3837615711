package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/contextd/contextd/cmd/contextd/internal/eval"
	"github.com/contextd/contextd/config"
)

// evalScenarios runs the embedded scenario suite against a fresh contextd
// (embedded storage in a temp dir, no LLM unless --config names one),
// served over HTTP in this process with its background workers running, as
// `contextd serve` runs them, and prints the report.
func evalScenarios(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("eval scenarios", flag.ContinueOnError)
	fs.SetOutput(stdout)
	only := fs.String("only", "", "run only the scenarios whose id contains this")
	details := fs.Int("details", 5, "violations listed per probe answer")
	show := fs.Bool("show-context", false, "print each probe answer's context text")
	strict := fs.Bool("strict", false, "exit non-zero when any measurement is not 0")
	cfgPath := fs.String("config", "", "agents.yaml whose settings to use (default: built-in defaults); storage and index go to a temp dir")
	dir := fs.String("dir", "", "run the scenario chats of this directory (its *.yaml files) instead of the built-in suite")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	base := config.Default()
	if *cfgPath != "" {
		c, err := config.Load(*cfgPath, getenv)
		if err != nil {
			return fmt.Errorf("config %s: %w", *cfgPath, err)
		}
		base = c
	}
	scs, err := loadScenarios(*dir)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "contextd-scenarios-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cfg := *base
	cfg.Storage = config.Storage{Driver: "sqlite", SQLitePath: filepath.Join(tmp, "contextd.db")}
	cfg.Vector.EmbeddedPath = filepath.Join(tmp, "vectors.db")
	app, err := build(ctx, &cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	wctx, stop := context.WithCancel(ctx)
	done := app.StartWorkers(wctx)
	srv := httptest.NewServer(app.Handler)
	defer func() {
		srv.Close()
		stop()
		<-done
		app.Close()
	}()
	rep := eval.RunScenarios(ctx, srv.URL, scs, eval.ScenarioOptions{Progress: stdout, Only: *only})
	rep.Write(stdout, *details)
	if *show {
		for _, c := range rep.Chats {
			for _, a := range c.Answers {
				fmt.Fprintf(stdout, "\n----- %s / %s @%d (%s) -----\n%s\n", c.ID, a.Probe, a.Budget, a.Strategy, a.Context)
			}
		}
	}
	if errs := rep.Errors(); len(errs) > 0 {
		return errors.New("scenarios failed to run: " + fmt.Sprint(errs))
	}
	if *strict && rep.Counts().Total() > 0 {
		return fmt.Errorf("scenario suite: %d violations", rep.Counts().Total())
	}
	return nil
}

// loadScenarios is the built-in suite, or the chats of dir.
func loadScenarios(dir string) ([]*eval.Scenario, error) {
	if dir == "" {
		return eval.LoadScenarios()
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	scs, err := eval.LoadScenarioFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, fmt.Errorf("scenarios in %s: %w", dir, err)
	}
	if len(scs) == 0 {
		return nil, fmt.Errorf("scenarios in %s: no *.yaml file", dir)
	}
	return scs, nil
}
