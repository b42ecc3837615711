#!/usr/bin/env bash
# make bench-http: contextd's HTTP read and write paths under wrk, each as a
# share of a no-op Go handler's req/s measured in the same run (loopback,
# wrk -t2 -c32, 200 chats x 50 turns, budget 2000, embedded default).
# Env: DURATION (default 10s), SERVER_BIN (another contextd build to measure), CHATS (200), TURNS (50),
# CHURN=<turns/s> (churn mode: measure right after the import, without waiting
# for the background work, while `contextd bench churn` appends that many
# turns/s across the chats; the floor is then measured before the import, on
# an idle machine), PPROF=1 or PPROF=<route> (CPU, allocation, block and mutex profiles
# and a runtime trace of contextd during that route's run, rag_augmented for
# 1, written to $OUT).
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-10s}
CHATS=${CHATS:-200}
TURNS=${TURNS:-50}
HERE=scripts/bench-http

if ! command -v wrk >/dev/null 2>&1; then
  echo "bench-http: installing wrk (Debian package)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq wrk >/dev/null; fi
fi
go build -o bin/contextd ./cmd/contextd
# SERVER_BIN measures another build of contextd (e.g. an older commit's)
# against the same no-op floor.
SERVER_BIN=$(realpath "${SERVER_BIN:-bin/contextd}")

CHURN=${CHURN:-0}
PROF_ROUTE=${PPROF:-0}; [ "$PROF_ROUTE" = 1 ] && PROF_ROUTE=rag_augmented

OUT=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port); NOOP=$(free_port); PP=$(free_port)
pids=(); prof_pids=()
cleanup() { for p in "${pids[@]}" "${prof_pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# contextd on built-in defaults, its data in the temp dir.
pprof_args=()
if [ "$PROF_ROUTE" != 0 ]; then pprof_args=(--pprof "127.0.0.1:$PP"); fi
(cd "$OUT" && CONTEXTD_ADDR="127.0.0.1:$PORT" exec "$SERVER_BIN" serve "${pprof_args[@]}" >"$OUT/contextd.log" 2>&1) &
pids+=($!); server_pid=$!
bin/contextd bench noop --addr "127.0.0.1:$NOOP" >"$OUT/noop.log" 2>&1 &
pids+=($!); noop_pid=$!
for _ in $(seq 100); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && curl -sf -XPOST "127.0.0.1:$NOOP/v1/context" >/dev/null && break; sleep 0.1; done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system, in clock ticks
run() { # name url script -> "req/s p50 p99 non2xx cpu_us_per_request"
  local out pid=$server_pid before
  [ "$1" = floor ] && pid=$noop_pid
  before=$(cpu_ticks "$pid")
  out=$(CHATS=$CHATS wrk -t2 -c32 -d"$DURATION" --latency -s "$HERE/$3" "$2" 2>&1)
  echo "$out" >"$OUT/$1.wrk"
  CPU_TICKS=$(($(cpu_ticks "$pid") - before)) HZ=$(getconf CLK_TCK) python3 "$HERE/parse.py" <<<"$out"
}
profile() { # secs: CPU profile and trace over the run; block and mutex profiles as deltas over it
  local secs=$(($1 - 1)) b="127.0.0.1:$PP/debug/pprof"
  curl -s -o "$OUT/cpu.pprof" "$b/profile?seconds=$secs" &
  prof_pids+=($!)
  curl -s -o "$OUT/block.pprof" "$b/block?seconds=$secs" &
  prof_pids+=($!)
  curl -s -o "$OUT/mutex.pprof" "$b/mutex?seconds=$secs" &
  prof_pids+=($!)
  curl -s -o "$OUT/allocs.pprof" "$b/allocs?seconds=$secs" &
  prof_pids+=($!)
  (sleep 2; curl -s -o "$OUT/trace.out" "$b/trace?seconds=3") &
  prof_pids+=($!)
}
measure() { # name url script: R[name] from run, profiled when it is PPROF's route
  if [ "$1" = "$PROF_ROUTE" ]; then profile "${DURATION%s}"; fi
  R[$1]=$(run "$@")
}
backlog() { curl -s "127.0.0.1:$PORT/metrics" | awk '/^contextd_backlog_(unindexed|unsummarised)_turns /{sub("contextd_backlog_","",$1); printf "%s=%s ", $1, $2}'; }
declare -A R
if [ "$CHURN" != 0 ]; then
  # The floor first, on an idle machine: the background work that follows
  # the import would lower it and flatter contextd's share.
  measure floor "http://127.0.0.1:$NOOP" context_rs.lua
fi

echo "seeding $CHATS chats x $TURNS turns ..."
python3 "$HERE/seed.py" "http://127.0.0.1:$PORT" "$CHATS" "$TURNS"
if [ "$CHURN" = 0 ]; then
  # Let the indexer drain, then one context per chat (steady state:
  # summaries current, caches warm) before measuring.
  for _ in $(seq 600); do
    left=$(curl -s "127.0.0.1:$PORT/metrics" | awk '/^contextd_backlog_unindexed_turns /{print $2}')
    [ "${left:-1}" = 0 ] && break; sleep 0.1
  done
  python3 "$HERE/seed.py" --warm "http://127.0.0.1:$PORT" "$CHATS" "$TURNS"
  measure floor "http://127.0.0.1:$NOOP" context_rs.lua
else
  # Right after the import, the background busy: no drain, no warm-up, and
  # a steady stream of appends keeps the workers busy throughout.
  echo "churn: $CHURN turns/s across the chats; backlog right after the import: $(backlog)"
  bin/contextd bench churn --addr "127.0.0.1:$PORT" --rate "$CHURN" --chats "$CHATS" --clients 32 >"$OUT/churn.log" 2>&1 &
  churn_pid=$!
  pids+=($churn_pid)
fi
measure running_summary "http://127.0.0.1:$PORT" context_rs.lua
measure rag_augmented "http://127.0.0.1:$PORT" context_rag.lua
measure append "http://127.0.0.1:$PORT" append.lua
if [ "$CHURN" != 0 ]; then
  echo "churn: backlog at the end: $(backlog)"
  kill -TERM "$churn_pid" 2>/dev/null || true
  wait "$churn_pid" 2>/dev/null || true
  cat "$OUT/churn.log"
fi

read -r floor _ _ _ _ <<<"${R[floor]}"
echo
mode="steady (backlog drained, one context per chat first)"
[ "$CHURN" != 0 ] && mode="churn (right after the import, $CHURN turns/s appended meanwhile; floor before the import)"
echo "bench-http: loopback, wrk -t2 -c32 -d$DURATION, $CHATS chats x $TURNS turns, budget 2000, embedded default, $mode; $(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-28s | %10s | %9s | %8s | %8s | %7s | %12s |\n' route "req/s" "of floor" p50 p99 errors "CPU/request"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "------------------------------" "-----------:" "----------:" "---------:" "---------:" "--------:" "-------------:"
for k in floor running_summary rag_augmented append; do
  read -r rps p50 p99 errs cpu <<<"${R[$k]}"
  share=$(python3 -c "print(f'{100*$rps/$floor:.1f}%')")
  name=$k; [ "$k" = floor ] && name="no-op Go handler (floor)"; [ "$k" = append ] && name="append (one turn)"
  printf '| %-28s | %10s | %9s | %8s | %8s | %7s | %12s |\n' "$name" "$rps" "$share" "$p50" "$p99" "$errs" "$cpu"
done
echo "(raw wrk output and logs in $OUT)"
if [ "$PROF_ROUTE" != 0 ]; then wait "${prof_pids[@]}"; echo "profiles of $PROF_ROUTE: $OUT/{cpu,allocs,block,mutex}.pprof, $OUT/trace.out"; fi
