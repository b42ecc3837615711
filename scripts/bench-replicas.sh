#!/usr/bin/env bash
# bench-replicas: appends/s and contexts/s of 1, 2 and 3 contextd replicas
# on one throwaway Postgres cluster (TestReplicaThroughput in
# cmd/contextd/replicas_test.go): 16 keep-alive clients spread round-robin
# over the replicas, DURATION per phase, vector.driver none, llm none. It
# also checks what the replicas' background work wrote (no gaps, no episode
# or summary record written twice). All on loopback; the replicas, Postgres
# and the clients share this machine's cores, so on a small machine the
# figures show correctness and the overhead of more processes, not scaling.
set -euo pipefail
DURATION=${DURATION:-10s}
root=$(git rev-parse --show-toplevel)
cd "$root"
CONTEXTD_REPLICA_BENCH=1 CONTEXTD_REPLICA_BENCH_DURATION="$DURATION" \
  go test ./cmd/contextd/ -run '^TestReplicaThroughput$' -count=1 -v -timeout 30m |
  grep -v '^        {' | grep -E '^\s+(replicas_test|\|)|^(--- |ok|FAIL)'
