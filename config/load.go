package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultPath is where `contextd serve` looks when --config is not given.
const DefaultPath = "agents.yaml"

// EnvAddr overrides server.addr when set.
const EnvAddr = "CONTEXTD_ADDR"

// EnvAllowRemoteWithoutAuth overrides server.allow_remote_without_auth
// when set ("true" or "false"): a container image, which must listen
// beyond its own loopback, says so in its environment.
const EnvAllowRemoteWithoutAuth = "CONTEXTD_ALLOW_REMOTE_WITHOUT_AUTH"

// Parse decodes, expands, defaults and validates agents.yaml content.
// getenv supplies ${VAR} values and CONTEXTD_ADDR (nil means os.Getenv).
// Any problem with the content, YAML syntax included, is returned as
// *Errors listing every problem found, each with its line.
func Parse(data []byte, getenv func(string) string) (*Config, error) {
	return parse(data, "", getenv)
}

// Load reads and parses the file at path; problems are reported as
// "path:line: ...". A file that cannot be read is a plain wrapped error
// (errors.Is(err, fs.ErrNotExist) works).
func Load(path string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return parse(data, path, getenv)
}

// Open finds the config the way `contextd serve` does: path when given;
// else ./agents.yaml when it exists; else the built-in defaults (with
// CONTEXTD_ADDR applied). source is the file loaded, or "" for the defaults.
func Open(path string, getenv func(string) string) (cfg *Config, source string, err error) {
	if path == "" {
		if _, statErr := os.Stat(DefaultPath); errors.Is(statErr, fs.ErrNotExist) {
			cfg, err = parse(nil, "", getenv)
			return cfg, "", err
		}
		path = DefaultPath
	}
	cfg, err = Load(path, getenv)
	return cfg, path, err
}

// Check validates the config that Open would load, for `contextd
// check-config`. The report is "ok" (then one "warning: ..." line per
// warning) or one line per problem, each with its YAML line number.
func Check(path string, getenv func(string) string) (ok bool, report string) {
	cfg, source, err := Open(path, getenv)
	if err != nil {
		return false, err.Error()
	}
	lines := []string{"ok"}
	if source == "" {
		lines = append(lines, "note: no "+DefaultPath+" found; using the built-in defaults")
	}
	for _, w := range cfg.Warnings {
		lines = append(lines, "warning: "+w)
	}
	return true, strings.Join(lines, "\n")
}

func parse(data []byte, file string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	root, syntax := parseYAML(data)
	if syntax != nil {
		return nil, &Errors{File: file, Problems: []Problem{*syntax}}
	}
	c := Default()
	d := &decoder{getenv: getenv, keys: map[string]*yaml.Node{}}
	if root != nil {
		d.root(root, c)
	}
	d.finish(c)
	if len(d.problems) > 0 {
		sortProblems(d.problems)
		return nil, &Errors{File: file, Problems: d.problems}
	}
	sortProblems(d.warnings)
	for _, w := range d.warnings {
		c.Warnings = append(c.Warnings, format(file, w))
	}
	return c, nil
}

// finish applies the defaults that depend on other keys, the environment
// override, and the cross-key checks.
func (d *decoder) finish(c *Config) {
	// 384 is the hashing embedder's size; other providers use their model's.
	if c.Embedder.Provider != "hashing" && !d.has("embedder.dimensions") {
		c.Embedder.Dimensions = 0
	}
	if rl := &c.Server.RateLimit; rl.RequestsPerSecond > 0 && rl.Burst == 0 {
		rl.Burst = max(1, int(math.Ceil(rl.RequestsPerSecond)))
	}
	if addr := d.getenv(EnvAddr); addr != "" {
		if msg := checkHostPort(addr, true); msg != "" {
			d.fail(nil, "server.addr", "%s from the environment %s", EnvAddr, msg)
		} else {
			c.Server.Addr = addr
		}
	}
	if v := d.getenv(EnvAllowRemoteWithoutAuth); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			d.fail(nil, "server.allow_remote_without_auth", "%s from the environment must be true or false, got %q", EnvAllowRemoteWithoutAuth, v)
		}
		c.Server.AllowRemoteWithoutAuth = b
	}
	d.telemetryEnv(&c.Telemetry)
	d.crossChecks(c)
}

var yamlLineRE = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// parseYAML reads the single YAML document; nil root means an empty file.
func parseYAML(data []byte) (root *yaml.Node, problem *Problem) {
	defer func() {
		// A parser bug must not take the process down with it.
		if r := recover(); r != nil {
			root, problem = nil, &Problem{Message: fmt.Sprintf("invalid YAML: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, syntaxProblem(data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, syntaxProblem(data, err)
	default:
		return nil, &Problem{Line: extra.Line, Column: extra.Column, Message: "only one YAML document is allowed (remove the second ---)"}
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0], nil
	}
	return nil, nil
}

// syntaxProblem locates a YAML syntax error. yaml.v3 reports the line
// where the enclosing block starts (a mis-indented key on line 3 of a
// mapping opened on line 1 is "line 1"), so the line of the problem itself
// is found as the first prefix of the document that fails the same way.
func syntaxProblem(data []byte, err error) *Problem {
	msg := err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return &Problem{Message: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	block, _ := strconv.Atoi(m[1])
	return &Problem{Line: problemLine(data, block, m[2]), Message: "invalid YAML: " + m[2]}
}

// maxProblemScan bounds the prefixes tried (each is a parse): configs are
// a few hundred lines.
const maxProblemScan = 2000

// problemLine is the first line n >= from such that the document's first
// n lines fail with the same message; from when none does.
func problemLine(data []byte, from int, message string) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for n := max(from, 1); n <= len(lines) && n < from+maxProblemScan; n++ {
		var doc yaml.Node
		err := yaml.Unmarshal(bytes.Join(lines[:n], nil), &doc)
		if err == nil {
			continue
		}
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil && m[2] == message {
			return n
		}
	}
	return from
}
