"""Reads wrk --latency output; prints "req/s p50 p99 non2xx cpu", cpu being
the server's CPU time per request (CPU_TICKS clock ticks of HZ over the run,
its background work included): steadier across runs than req/s on a shared
machine."""
import os, re, sys
out = sys.stdin.read()
rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
n = int(bad.group(1)) if bad else 0
if errs:
    n += sum(int(x) for x in errs.groups())
reqs = re.search(r"(\d+) requests in", out)
ticks, hz = int(os.environ.get("CPU_TICKS", "0")), int(os.environ.get("HZ", "100"))
cpu = f"{1e6 * ticks / hz / int(reqs.group(1)):.0f}us" if reqs and int(reqs.group(1)) else "-"
print(rps.group(1) if rps else "0", p50.group(1) if p50 else "-", p99.group(1) if p99 else "-", n, cpu)
