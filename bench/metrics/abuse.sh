#!/usr/bin/env bash
# Issue 28: does abuse of the metrics endpoint touch the shaper's control loop? Runs
# `bauxite up --metrics` on a veth in a namespace made for the run, traces the daemon's
# netlink requests (one class dump per poll) for 10 s quiet and 10 s while hammer.py
# holds 300 idle connections, 5 clients sending a byte every 50 ms and 20 clients
# scraping with 6 KB headers, and prints the poll intervals of both.
#
# Usage: sudo bench/metrics/abuse.sh [BAUXITE]
set -euo pipefail
bx=$(realpath "${1:-target/release/bauxite}")
here=$(dirname "$(realpath "$0")")
out=$(mktemp -d)
ns="bxmx-$$"
cleanup() { [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; ip netns del "$ns" 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT
ip netns add "$ns"; ip -n "$ns" link set lo up
ip -n "$ns" link add bxa0 type veth peer name bxb0
ip -n "$ns" link set bxa0 up; ip -n "$ns" link set bxb0 up
ip netns exec "$ns" "$bx" up --iface bxa0 --rate 10mbit --metrics 127.0.0.1:9464 >"$out/up.log" 2>&1 &
pid=$!
sleep 2
timeout 10 strace -ttt -p "$pid" -e trace=sendto,sendmsg -o "$out/quiet.trace" 2>/dev/null || true
ip netns exec "$ns" python3 "$here/hammer.py" 9464 12 >"$out/hammer.out" &
hammer=$!
sleep 1
timeout 10 strace -ttt -p "$pid" -e trace=sendto,sendmsg -o "$out/hammered.trace" 2>/dev/null || true
wait "$hammer"
python3 - "$out" <<'PY'
import sys
out = sys.argv[1]
for name in ("quiet", "hammered"):
    t = [float(l.split()[0]) for l in open(f"{out}/{name}.trace") if "send" in l]
    # One netlink dump a poll: sends more than 2 ms apart start polls.
    polls = [x for i, x in enumerate(t) if i == 0 or x - t[i - 1] > 0.002]
    gaps = sorted((b - a) * 1e3 for a, b in zip(polls, polls[1:]))
    q = lambda p: gaps[min(len(gaps) - 1, int(p * len(gaps)))]
    print(f"{name}: {len(gaps)} polls, interval ms p50 {q(0.5):.2f} p99 {q(0.99):.2f} max {gaps[-1]:.2f}")
PY
cat "$out/hammer.out"
