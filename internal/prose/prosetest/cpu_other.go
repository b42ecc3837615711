//go:build !unix

package prosetest

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
