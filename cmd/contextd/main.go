// Command contextd serves assembled, token-budgeted conversation context to
// LLM agent supervisors. main only parses arguments and wires; run makes the
// whole binary testable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/transport/api"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "contextd:", oneLine(err))
		os.Exit(exitCode(err))
	}
}

const usage = `usage: contextd <command> [flags]

commands:
  serve         run the HTTP server          (contextd serve [--config agents.yaml])
  check-config  validate a config            (contextd check-config [--config agents.yaml])
  migrate       apply storage migrations     (contextd migrate [--config agents.yaml])
  export        write a dump (JSON Lines)    (contextd export [--config F] [--tenant T] [--chat ID | --user ID] > dump.jsonl)
  import        load a dump idempotently     (contextd import [--config F] [--file dump.jsonl] < dump.jsonl)
  eval          run an evaluation            (contextd eval locomo --data FILE [--llm replay]; contextd eval beam --data DIR; contextd eval scenarios)
  bench         run a benchmark              (contextd bench load [flags])
  healthcheck   exit 0 when /readyz is ready (contextd healthcheck [--url http://127.0.0.1:8080] [--timeout 5s])
  version       print the version
`

// version and commit are set at build time with -ldflags
// "-X main.version=... -X main.commit=..." (the Makefile and the Dockerfile
// do); without a commit, the one Go stamped from the repository is used.
var (
	version = "dev"
	commit  = ""
)

// buildInfo is what GET /version and contextd_build_info say.
func buildInfo() api.BuildInfo {
	c := commit
	if c == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			modified := false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					c = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if c != "" && modified {
				c += "-dirty"
			}
		}
	}
	if c == "" {
		c = "unknown"
	}
	return api.BuildInfo{Version: version, Commit: c, Go: runtime.Version()}
}

// run executes one contextd command. It returns when the command is done or
// ctx is cancelled (serve: SIGTERM drains, then run returns nil).
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return usageError("no command given")
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], getenv, stdout)
	case "check-config":
		return cmdCheckConfig(args[1:], getenv, stdout)
	case "migrate":
		return cmdMigrate(ctx, args[1:], getenv, stdout)
	case "export":
		return cmdExport(ctx, args[1:], getenv, stdout)
	case "import":
		return cmdImport(ctx, args[1:], getenv, os.Stdin, stdout)
	case "eval":
		return cmdEval(ctx, args[1:], getenv, stdout)
	case "bench":
		return cmdBench(ctx, args[1:], getenv, stdout)
	case "healthcheck":
		return cmdHealthcheck(ctx, args[1:], getenv, stdout)
	case "version", "--version", "-v":
		b := buildInfo()
		fmt.Fprintln(stdout, "contextd", b.Version, b.Commit, b.Go)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stdout, usage)
	return usageError(fmt.Sprintf("unknown command %q", args[0]))
}

type usageError string

// parseFlags parses a subcommand's flags. A bad flag, or an argument no
// flag takes (a config file given without --config, say), is a usage
// error (exit 2): never ignored, so a command never runs on a config it
// was not given.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError(fs.Name() + ": " + err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("%s: unexpected argument %q (flags come first; a config file is --config FILE)", fs.Name(), fs.Arg(0)))
	}
	return nil
}

func (e usageError) Error() string { return string(e) }

func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// oneLine keeps the exit message to one line, as the contract promises: a
// config's problems as the first and a count (check-config prints them
// all), any other error's lines joined, none dropped (a driver's reason
// for a failed connection may follow a newline).
func oneLine(err error) string {
	msg := err.Error()
	if ce := (*config.Errors)(nil); errors.As(err, &ce) {
		msg = strings.Replace(msg, ce.Error(), ce.Summary(), 1)
	}
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}
