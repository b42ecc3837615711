//go:build unix

package loadgen

import (
	"syscall"
	"time"
)

// selfCPUTime is this process's CPU time (user + system); -1 when unknown.
func selfCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
