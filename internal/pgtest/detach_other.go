//go:build !unix

package pgtest

import "os/exec"

// detach does nothing where there are no process groups (the throwaway
// clusters need a Unix machine anyway).
func detach(*exec.Cmd) {}
