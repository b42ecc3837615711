//go:build !amd64 || purego

package embedded

// dotI8 is dotI8Go where no vector version is written.
func dotI8(a, b []int8) int32 { return dotI8Go(a, b) }
