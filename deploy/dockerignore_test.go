// Package deploy holds tests of the deployment artefacts in this
// directory (there is no Go code to deploy here).
package deploy

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// maxContext bounds the image's build context.
const maxContext = 20 << 20

// buildContext is what `docker build` sends from the repository root
// under its .dockerignore: the files left, with their sizes.
type buildContext struct {
	pm    *patternmatcher.PatternMatcher
	files map[string]int64
}

func (b *buildContext) excluded(t *testing.T, rel string) bool {
	t.Helper()
	ex, err := b.pm.MatchesOrParentMatches(filepath.ToSlash(rel))
	if err != nil {
		t.Fatalf("matching %s: %v", rel, err)
	}
	return ex
}

func loadBuildContext(t *testing.T, root string) *buildContext {
	t.Helper()
	f, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	b := &buildContext{pm: pm, files: map[string]int64{}}
	var reinclude []string // the "!" patterns: a directory left out may hold a file one lets back in
	for _, p := range pm.Patterns() {
		if p.Exclusion() {
			reinclude = append(reinclude, p.String())
		}
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		ex := b.excluded(t, rel)
		if d.IsDir() {
			if ex && !mayReinclude(rel, reinclude) {
				return filepath.SkipDir
			}
			return nil
		}
		if ex {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.files[rel] = info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mayReinclude reports whether a "!" pattern could let back in a file
// under dir.
func mayReinclude(dir string, reinclude []string) bool {
	for _, p := range reinclude {
		if strings.HasPrefix(p, "**") || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// The .dockerignore leaves a small context that still holds everything
// the Dockerfile builds from: every Go file and embedded file of every
// package of the module that cmd/contextd is built from, go.mod, go.sum,
// and what the Dockerfile COPYs; never .git, node_modules, bin/, data/,
// bench/ or the clients' build output.
func TestDockerBuildContext(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	b := loadBuildContext(t, root)

	var total int64
	for rel, n := range b.files {
		total += n
		for _, seg := range strings.Split(rel, "/") {
			if seg == ".git" || seg == "node_modules" {
				t.Errorf("%s is in the build context", rel)
			}
		}
		for _, dir := range []string{"bin/", "data/", "bench/", "clients/"} {
			if strings.HasPrefix(rel, dir) {
				t.Errorf("%s is in the build context", rel)
			}
		}
	}
	t.Logf("build context: %d files, %.1f MB", len(b.files), float64(total)/(1<<20))
	if total >= maxContext {
		t.Errorf("the build context is %d bytes, over %d", total, maxContext)
	}
	// Whether or not they exist in this checkout, these are left out.
	for _, rel := range []string{".git/HEAD", ".git", "node_modules/x/index.js", "clients/typescript/node_modules/typescript/lib/tsc.js",
		"clients/typescript/dist/index.js", "clients/typescript/contextd-client-0.1.0.tgz", "clients/python/build/lib/x.py",
		"bin/contextd", "data/contextd.db", "bench/locomo10.json", "transport/mcpserver/testdata/tsclient/node_modules/a/b.js",
		"ui/node_modules/x.js", "store/sqlite/sqlite_test.go", "docs/api.md"} {
		if !b.excluded(t, rel) {
			t.Errorf("%s would be in the build context", rel)
		}
	}

	need := []string{"go.mod", "go.sum"}
	need = append(need, dockerfileCopies(t, filepath.Join(root, "deploy", "Dockerfile"))...)
	need = append(need, buildFiles(t, root)...)
	for _, rel := range need {
		if _, ok := b.files[rel]; !ok {
			t.Errorf("%s is needed by the image build but the .dockerignore leaves it out", rel)
		}
	}
	if len(need) < 50 {
		t.Fatalf("only %d files found to be needed: the go list of cmd/contextd failed?", len(need))
	}
}

// dockerfileCopies lists the sources the Dockerfile copies from the
// context (COPY without --from), but ".".
func dockerfileCopies(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || !strings.EqualFold(fields[0], "COPY") {
			continue
		}
		var args []string
		fromStage := false
		for _, a := range fields[1:] {
			if strings.HasPrefix(a, "--") {
				fromStage = fromStage || strings.HasPrefix(a, "--from=")
				continue
			}
			args = append(args, a)
		}
		if fromStage {
			continue
		}
		for _, src := range args[:len(args)-1] {
			if src != "." && src != "./" {
				out = append(out, strings.TrimPrefix(src, "./"))
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no COPY from the build context found in the Dockerfile")
	}
	return out
}

// buildFiles lists, relative to root, the Go and embedded files of the
// module's packages that cmd/contextd is built from (as the Dockerfile
// builds it: linux, CGO off).
func buildFiles(t *testing.T, root string) []string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("needs the go command: %v", err)
	}
	cmd := exec.Command(goCmd, "list", "-deps", "-json=ImportPath,Dir,Module,GoFiles,EmbedFiles", "./cmd/contextd")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var files []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath, Dir     string
			Module              *struct{ Main bool }
			GoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		dir, err := filepath.Rel(root, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(p.GoFiles, p.EmbedFiles...) {
			files = append(files, filepath.ToSlash(filepath.Join(dir, f)))
		}
	}
	return files
}
