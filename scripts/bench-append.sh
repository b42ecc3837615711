#!/usr/bin/env bash
# bench-append: BenchmarkAppendChat1500 (a 1,500-turn chat appended in
# batches of 100 on the embedded default) of BASE and of the work tree,
# run alternately ROUNDS times in one session, so both see the same
# machine. BASE's tree gets this tree's benchmark file if it lacks it.
set -euo pipefail
BASE=${BASE:-09245c8}
ROUNDS=${ROUNDS:-5}
BENCHTIME=${BENCHTIME:-10x}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base"
git -C "$root" archive "$BASE" | tar -x -C "$tmp/base"
cp -n "$root/cmd/contextd/append_bench_test.go" "$tmp/base/cmd/contextd/" || true
(cd "$tmp/base" && go test -c -o "$tmp/base.test" ./cmd/contextd/)
(cd "$root" && go test -c -o "$tmp/head.test" ./cmd/contextd/)
for i in $(seq "$ROUNDS"); do
  for which in base head; do
    printf '%s round %d: ' "$which" "$i"
    (cd "$root/cmd/contextd" && "$tmp/$which.test" -test.run '^$' -test.bench 'AppendChat1500$' -test.benchtime "$BENCHTIME") |
      awk '/turns\/s/ {print $(NF-1), "turns/s,", $3/1e6, "ms per chat"}'
  done
done
