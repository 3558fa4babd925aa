#!/usr/bin/env bash
# `bauxite link` at speed: iperf3 (TCP) from a command behind the emulated link to a
# server on the host side, and what the emulator itself adds to each packet (its
# `summary.json`: emulator_late_ms, the time from the model's delivery to the send).
# Everything runs inside a namespace made for the run ("the host"), so nothing listens
# on this machine's own network, and it is removed at the end.
#
# Usage: sudo bench/link/throughput.sh [BAUXITE] [RATE] [SECONDS] [RUNS]
set -euo pipefail
bx=$(realpath "${1:-target/release/bauxite}")
rate=${2:-100mbit}
seconds=${3:-10}
runs=${4:-3}
host="bxbench-$$"
out=$(mktemp -d)
trap 'ip netns del "$host" 2>/dev/null || true; rm -rf "$out"' EXIT
ip netns add "$host"
ip -n "$host" link set lo up
printf '| run | iperf3 Mbit/s | link delivered Mbit/s | utilisation | emulator late p50 / p99 / max (ms) | realtime |\n'
printf '|---|---:|---:|---:|---|---|\n'
for run in $(seq 1 "$runs"); do
  ip netns exec "$host" iperf3 -s -1 -p 5301 >/dev/null 2>&1 &
  server=$!
  sleep 0.3
  ip netns exec "$host" "$bx" link --up "rate=$rate" --down "rate=$rate" --as-root --record "$out/$run" -- \
    sh -c "iperf3 -c \$BAUXITE_LINK_HOST -p 5301 -t $seconds -J" >"$out/iperf3-$run.json" 2>"$out/link-$run.log"
  wait "$server" || true
  python3 - "$out/iperf3-$run.json" "$out/$run/summary.json" "$run" <<'PY'
import json, sys
iperf = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))["uplink"]
late = s["emulator_late_ms"]
mbps = iperf["end"]["sum_received"]["bits_per_second"] / 1e6
print(f"| {sys.argv[3]} | {mbps:.1f} | {s['delivered_mbps']:.1f} | {s['utilisation']:.3f} | "
      f"{late[0]:.3f} / {late[1]:.3f} / {late[2]:.3f} | {json.load(open(sys.argv[2]))['realtime']} |")
PY
done
