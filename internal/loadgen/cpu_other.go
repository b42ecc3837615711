//go:build !unix

package loadgen

import "time"

// selfCPUTime is unknown where there is no getrusage: the report then
// leaves CPU per request out for an in-process target.
func selfCPUTime() time.Duration { return -1 }
