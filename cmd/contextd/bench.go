package main

import (
	"context"
	"io"
)

func cmdBench(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return usageError("usage: contextd bench load [flags] (not built yet)")
}
