package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory"
)

// cmdExport writes a dump of a tenant, one chat or one user to stdout.
func cmdExport(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stdout)
	cfgPath := fs.String("config", "", "path to agents.yaml (default ./agents.yaml, else built-in defaults)")
	tenant := fs.String("tenant", memory.DefaultTenant, "the tenant to export")
	chat := fs.String("chat", "", "export this chat only")
	user := fs.String("user", "", "export every chat of this user and the user's profile")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *chat != "" && *user != "" {
		return usageError("export: --chat and --user exclude each other")
	}
	if err := memory.CheckName(*tenant); err != nil {
		return usageError(fmt.Sprintf("export: --tenant %q %v", *tenant, err))
	}
	cfg, err := loadConfigOnly(*cfgPath, getenv)
	if err != nil {
		return err
	}
	if p := cfg.Storage.SQLitePath; cfg.Storage.Driver != "postgres" {
		// Opening a missing file would create an empty store and export
		// nothing, as if all were well.
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("export: no database at %s (storage.sqlite_path, relative to the working directory): %w", p, err)
		}
	}
	store, err := openStore(ctx, cfg.Storage)
	if err != nil {
		return err
	}
	defer store.Close()
	w := bufio.NewWriterSize(stdout, 64<<10)
	n := 0
	scope := memory.DumpScope{Tenant: *tenant, ChatID: *chat, UserID: *user}
	err = store.Dump(ctx, scope, engine.ExportFilter(func(r memory.DumpRecord) error {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		n++
		_, err = w.Write(append(line, '\n'))
		return err
	}))
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return fmt.Errorf("export: tenant %q has no such chat or user", *tenant)
	case err != nil:
		return fmt.Errorf("export: %w", err)
	case n == 0:
		return fmt.Errorf("export: tenant %q holds nothing (is --tenant right, and the storage the server's?)", *tenant)
	}
	return w.Flush()
}

// cmdImport loads a dump from stdin (or --file) into the configured store
// (engine.Transfer.Import): every line is checked first, and a bad line
// refuses the import with its number; then each line is one transaction,
// records already there are left alone.
func cmdImport(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stdout)
	cfgPath := fs.String("config", "", "path to agents.yaml (default ./agents.yaml, else built-in defaults)")
	file := fs.String("file", "-", "the dump to read (- is stdin)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	in := stdin
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		in = f
	}
	cfg, store, err := configuredStore(ctx, *cfgPath, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	// The API's limits and validators: an import takes what an append
	// would, no more.
	d := engine.Deps{Store: store, Dumper: store,
		Limits: engine.Limits{MaxMessagesPerRequest: cfg.Server.MaxMessagesPerRequest, MaxMessageBytes: cfg.Server.MaxMessageBytes}}
	res, err := engine.NewTransfer(d).Import(ctx, in)
	fmt.Fprintf(stdout, "imported %d records (%d already present, %d dropped citing a deleted turn, %d episodes to rebuild) into %s\n",
		res.Added, res.Present, res.Dropped, res.Rebuild, cfg.Storage.Driver)
	return err
}

// configuredStore loads the config (path "" = the default lookup) and opens
// its store: what export, import and migrate start with.
func configuredStore(ctx context.Context, path string, getenv func(string) string) (*config.Config, memory.Backend, error) {
	cfg, err := loadConfigOnly(path, getenv)
	if err != nil {
		return nil, nil, err
	}
	store, err := openStore(ctx, cfg.Storage)
	if err != nil {
		return nil, nil, err
	}
	return cfg, store, nil
}

// loadConfigOnly loads the config a command names, its source in the error.
func loadConfigOnly(path string, getenv func(string) string) (*config.Config, error) {
	cfg, src, err := loadConfig(path, getenv)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", src, err)
	}
	return cfg, nil
}
