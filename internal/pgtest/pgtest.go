// Package pgtest gives tests a real PostgreSQL: DSN returns a fresh, empty
// database per call.
//
// With CONTEXTD_TEST_POSTGRES_DSN set, databases are created on that server
// (and dropped when the test ends). Otherwise one throwaway cluster is started
// per test binary from the initdb/pg_ctl found under
// /usr/lib/postgresql/*/bin (or on PATH): trust auth, 127.0.0.1 only, fsync
// off. The test binary's TestMain must call Main so the cluster is stopped
// afterwards; a watchdog process also stops it if the binary dies.
// Tests are skipped only when there is neither a DSN nor the binaries.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the variable pointing tests at an existing server; its user
// must be allowed to CREATE DATABASE.
const EnvDSN = "CONTEXTD_TEST_POSTGRES_DSN"

// shared is the per-binary cluster; Main stops it.
var shared struct {
	once     sync.Once
	c        *Cluster
	err      error
	mainUsed atomic.Bool
}

// Main runs the tests, then stops the cluster DSN may have started. Call it
// from TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }.
func Main(m *testing.M) {
	shared.mainUsed.Store(true)
	code := m.Run()
	if shared.c != nil {
		shared.c.Destroy()
	}
	os.Exit(code)
}

// DSN returns the connection string of a new, empty database that lives
// until tb ends.
func DSN(tb testing.TB) string {
	tb.Helper()
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return newDatabase(tb, dsn)
	}
	if _, err := findBin(); err != nil {
		skipOrFail(tb, fmt.Sprintf("pgtest: no PostgreSQL for tests: %v; set %s to use a server", err, EnvDSN))
	}
	if !shared.mainUsed.Load() {
		tb.Fatal("pgtest: the test binary must call pgtest.Main(m) from TestMain, so the cluster is stopped afterwards")
	}
	shared.once.Do(func() { shared.c, shared.err = StartCluster() })
	if shared.err != nil {
		tb.Fatalf("pgtest: %v", shared.err)
	}
	return shared.c.NewDatabase(tb)
}

// EnvRequire, when set (CI sets it), turns "no PostgreSQL here" from a skip
// into a failure, so Postgres tests cannot silently stop running.
const EnvRequire = "CONTEXTD_REQUIRE_POSTGRES"

func skipOrFail(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv(EnvRequire) != "" {
		tb.Fatal(msg + " (" + EnvRequire + " is set, so this is a failure, not a skip)")
	}
	tb.Skip(msg)
}

// Cluster is a throwaway PostgreSQL cluster owned by the test binary.
type Cluster struct {
	bin      string // directory holding initdb, pg_ctl, postgres
	dir      string // root of everything; owned by the server's user
	data     string
	log      string
	port     int
	runAs    string // "postgres" when running as root, else ""
	watchdog *exec.Cmd
}

// NewCluster starts a cluster for tb alone (destroyed when tb ends), for
// tests that stop and restart the server. It skips when a server is given by
// CONTEXTD_TEST_POSTGRES_DSN (such tests must not stop a shared server) or
// when there are no PostgreSQL binaries.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	if os.Getenv(EnvDSN) != "" {
		tb.Skipf("pgtest: %s is set; this test needs a cluster of its own", EnvDSN)
	}
	if _, err := findBin(); err != nil {
		skipOrFail(tb, fmt.Sprintf("pgtest: no PostgreSQL binaries: %v", err))
	}
	c, err := StartCluster()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(c.Destroy)
	return c
}

// findBin locates the newest PostgreSQL bin directory.
func findBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", errors.New("initdb/pg_ctl not found under /usr/lib/postgresql/*/bin or on PATH")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// StartCluster initialises and starts a new cluster in a temporary
// directory. Destroy stops it and removes the directory.
func StartCluster() (*Cluster, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "contextd-pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "server.log")}
	fail := func(err error) (*Cluster, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: run it as the postgres user,
		// in a directory that user owns.
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("running as root and no postgres user to run the server as: %w", err))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(fmt.Errorf("chown %s: %w", dir, err))
		}
		c.runAs = "postgres"
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fail(err)
	}
	if out, err := c.run(2*time.Minute, "initdb", "-D", c.data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return fail(fmt.Errorf("initdb: %v: %s", err, out))
	}
	if c.port, err = freePort(); err != nil {
		return fail(err)
	}
	if err := c.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c.startWatchdog()
	return c, nil
}

// run runs one of the cluster's binaries (as the server's user) with a
// deadline and returns its combined output.
func (c *Cluster) run(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	argv := append([]string{filepath.Join(c.bin, name)}, args...)
	if c.runAs != "" {
		argv = append([]string{"runuser", "-u", c.runAs, "--"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the server (again) on the cluster's data directory and port
// and waits until it accepts connections.
func (c *Cluster) Start() error {
	opts := strings.Join([]string{
		"-p", strconv.Itoa(c.port), "-h", "127.0.0.1", "-k", c.dir,
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=on",
		"-c", "max_connections=200", "-c", "shared_buffers=64MB",
	}, " ")
	if out, err := c.run(90*time.Second, "pg_ctl", "-D", c.data, "-l", c.log, "-o", opts, "-w", "-t", "60", "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %v: %s\nserver log:\n%s", err, out, c.Log())
	}
	// pg_ctl -w already waited; still prove a client can get in.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, c.DSN("postgres"))
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not ready: %v\nserver log:\n%s", err, c.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop shuts the server down (fast mode: open transactions are rolled back
// and clients disconnected).
func (c *Cluster) Stop() error {
	if out, err := c.run(90*time.Second, "pg_ctl", "-D", c.data, "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// Destroy stops the server if it runs and removes its files.
func (c *Cluster) Destroy() {
	_, _ = c.run(60*time.Second, "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
	if c.watchdog != nil && c.watchdog.Process != nil {
		_ = c.watchdog.Process.Kill()
		_ = c.watchdog.Wait()
	}
	_ = os.RemoveAll(c.dir)
}

// startWatchdog starts a shell that stops the server and removes its files
// once this process is gone, so a crashed or killed test binary does not
// leave a server running.
func (c *Cluster) startWatchdog() {
	stop := []string{filepath.Join(c.bin, "pg_ctl"), "-D", c.data, "-m", "immediate", "stop"}
	if c.runAs != "" {
		stop = append([]string{"runuser", "-u", c.runAs, "--"}, stop...)
	}
	script := `while kill -0 "$1" 2>/dev/null; do sleep 2; done; shift; dir="$1"; shift; "$@" >/dev/null 2>&1; rm -rf "$dir"`
	args := append([]string{"-c", script, "watchdog", strconv.Itoa(os.Getpid()), c.dir}, stop...)
	cmd := exec.Command("/bin/sh", args...)
	detach(cmd) // not killed with our process group
	if err := cmd.Start(); err == nil {
		c.watchdog = cmd
	}
}

// Port is the TCP port the server listens on (127.0.0.1).
func (c *Cluster) Port() int { return c.port }

// DSN is the URL of database db on this cluster.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// Log returns the server log so far.
func (c *Cluster) Log() string {
	b, err := os.ReadFile(c.log)
	if err != nil {
		return fmt.Sprintf("(no server log: %v)", err)
	}
	return string(b)
}

// NewDatabase creates an empty database on the cluster, dropped when tb
// ends, and returns its DSN.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, c.DSN("postgres"))
}

func newDatabase(tb testing.TB, adminDSN string) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "contextd_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, adminDSN)
		if err != nil {
			tb.Logf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	dsn, err := withDatabase(adminDSN, name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// withDatabase points a URL or keyword/value DSN at database db.
func withDatabase(dsn, db string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", EnvDSN, err)
		}
		u.Path = "/" + db
		u.RawPath = ""
		return u.String(), nil
	}
	// In keyword/value form a later keyword wins.
	return strings.TrimSpace(dsn) + " dbname=" + db, nil
}
