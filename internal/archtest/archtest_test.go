package archtest

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
)

const (
	module = "github.com/contextd/contextd"
	// maxFuncLines is the longest a function outside tests may be.
	maxFuncLines = 80
	// A type with manyMethods methods or more has at most maxFields fields.
	manyMethods = 10
	maxFields   = 15
	// maxBackendMethods bounds memory.Backend.
	maxBackendMethods = 40
)

// testHelpers are conformance suites and test helpers: test code, though
// not in _test.go files.
var testHelpers = []string{
	"store/storetest", "index/indextest", "derive/summarizertest",
	"derive/llmsum/llmtest", "internal/prose/prosetest",
}

// allowed are rules broken on purpose, each keyed as its check names it
// (a function "pkg/path.Recv.Name", a type "pkg/path.Name", an importer
// "pkg/path imports derive/extractive") with the reason, which starts
// with the rule: "long func", "big type", "extractive importer". It is
// empty: an entry added must say why, and an entry no violation needs
// fails the test.
var allowed = map[string]string{}

// used records which allowlist entries a run met, so a stale one fails.
type used map[string]bool

func (u used) allow(key string) bool {
	if _, ok := allowed[key]; ok {
		u[key] = true
		return true
	}
	return false
}

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", dir, err)
	}
	return dir
}

// pkgFile is one parsed non-test Go file of the module.
type pkgFile struct {
	pkg  string // directory relative to the root, "" for the root
	name string // path relative to the root
	file *ast.File
}

// sources parses every non-test Go file of the module outside the test
// helper packages (other modules, testdata and hidden directories skipped).
func sources(t *testing.T, dir string) (*token.FileSet, []pkgFile) {
	t.Helper()
	fset := token.NewFileSet()
	var out []pkgFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return skipDir(dir, path, rel, d.Name())
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, pkgFile{pkg: filepath.ToSlash(filepath.Dir(rel)), name: rel, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, out
}

func skipDir(top, path, rel, name string) error {
	if path == top {
		return nil
	}
	if strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || slices.Contains(testHelpers, rel) {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir // another module
	}
	return nil
}

// funcKey names a function as the allowlist does.
func funcKey(pkg string, fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return pkg + "." + fn.Name.Name
	}
	return pkg + "." + recvName(fn.Recv.List[0].Type) + "." + fn.Name.Name
}

// recvName is a receiver's type name without pointer or type parameters.
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return fmt.Sprintf("%T", e)
}

// No function outside tests is over maxFuncLines lines, from its func
// keyword to its closing brace.
func TestNoLongFunctions(t *testing.T) {
	fset, files := sources(t, root(t))
	u := used{}
	for _, f := range files {
		for _, d := range f.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if key := funcKey(f.pkg, fn); n > maxFuncLines && !u.allow(key) {
				t.Errorf("%s:%d: %s is %d lines; at most %d outside tests (split it into named steps)",
					f.name, fset.Position(fn.Pos()).Line, key, n, maxFuncLines)
			}
		}
	}
	stale(t, u, "long func")
}

// typeShape is what TestNoBigTypes counts of one named type.
type typeShape struct {
	fields, methods int
	at              string
}

// No type with manyMethods methods or more has more than maxFields
// fields: behaviour over that much state is several types.
func TestNoBigTypes(t *testing.T) {
	fset, files := sources(t, root(t))
	shapes := map[string]*typeShape{}
	shape := func(key string) *typeShape {
		if shapes[key] == nil {
			shapes[key] = &typeShape{}
		}
		return shapes[key]
	}
	for _, f := range files {
		for _, d := range f.file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) > 0 {
					shape(f.pkg+"."+recvName(d.Recv.List[0].Type)).methods++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							sh := shape(f.pkg + "." + ts.Name.Name)
							sh.fields, sh.at = countFields(st), fmt.Sprintf("%s:%d", f.name, fset.Position(ts.Pos()).Line)
						}
					}
				}
			}
		}
	}
	u := used{}
	for key, sh := range shapes {
		if sh.methods >= manyMethods && sh.fields > maxFields && !u.allow(key) {
			t.Errorf("%s: %s has %d methods and %d fields; at most %d fields with %d methods or more (group the fields that belong together)",
				sh.at, key, sh.methods, sh.fields, maxFields, manyMethods)
		}
	}
	stale(t, u, "big type")
}

// countFields counts a struct's fields, each name of `a, b int` once and
// an embedded field once.
func countFields(st *ast.StructType) int {
	n := 0
	for _, f := range st.Fields.List {
		n += max(len(f.Names), 1)
	}
	return n
}

// memory.Backend, every storage role at once, stays small enough to
// implement and to read.
func TestBackendSize(t *testing.T) {
	n := reflect.TypeFor[memory.Backend]().NumMethod()
	if n > maxBackendMethods && !allowedKey("memory.Backend") {
		t.Errorf("memory.Backend has %d methods; at most %d", n, maxBackendMethods)
	}
	if n <= maxBackendMethods && allowedKey("memory.Backend") {
		t.Errorf("memory.Backend has %d methods now: remove it from the allowlist", n)
	}
}

func allowedKey(key string) bool {
	_, ok := allowed[key]
	return ok
}

// listed is what `go list -deps -json` says of one package.
type listed struct {
	ImportPath string
	Standard   bool
}

// The domain (memory and the packages under it) depends on the standard
// library only: no driver, no LLM client, no other package of this module.
func TestDomainImportsStandardLibraryOnly(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard", "./memory/...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		inDomain := p.ImportPath == module+"/memory" || strings.HasPrefix(p.ImportPath, module+"/memory/")
		// internal/lex is what a word and a sentence are, which the
		// summary's rules need; its own dependencies are in this walk
		// (-deps), so it stays standard library only too.
		if !p.Standard && !inDomain && p.ImportPath != module+"/internal/lex" {
			t.Errorf("a package under memory/ depends on %s; the domain uses the standard library only", p.ImportPath)
		}
	}
}

// The extractive summariser is a summariser, not a toolbox: outside its
// siblings under derive/ and the composition root, nothing imports it
// (tests may, to build one).
func TestExtractiveImportedBySummarisersOnly(t *testing.T) {
	_, files := sources(t, root(t))
	u := used{}
	seen := map[string]bool{}
	for _, f := range files {
		if f.pkg == "cmd/contextd" || strings.HasPrefix(f.pkg, "derive/") || seen[f.pkg] {
			continue
		}
		for _, imp := range f.file.Imports {
			if imp.Path.Value != `"`+module+`/derive/extractive"` {
				continue
			}
			seen[f.pkg] = true
			if !u.allow(f.pkg + " imports derive/extractive") {
				t.Errorf("%s imports derive/extractive; only cmd/contextd and derive/* may (a helper it needs belongs in internal/prose or the domain)", f.name)
			}
		}
	}
	stale(t, u, "extractive importer")
}

// stale fails on an allowlist entry of the given kind that no violation
// used: it was fixed, so the entry must go.
func stale(t *testing.T, u used, kind string) {
	t.Helper()
	for key, why := range allowed {
		if strings.HasPrefix(why, kind) && !u[key] {
			t.Errorf("allowlist entry %q (%s) is no longer needed: remove it", key, why)
		}
	}
}
