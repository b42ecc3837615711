package dirlock

import (
	"errors"
	"os"
	"testing"
)

// A second Acquire on a held directory is refused naming the holder's
// pid; once released, it is taken. (flock locks are per open file, so
// two Acquires in one process conflict as two processes do.)
func TestAcquireRefusesAHeldDirectory(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	var held *HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("second Acquire: %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	_ = again.Release()
}
