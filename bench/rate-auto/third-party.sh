#!/usr/bin/env bash
# Issue 27's third-party case: iperf3 (CUBIC) uploading through a steady 1.5 Mbit/s TBF
# beside irtt's 64-byte probes every 10 ms, with a profile Bauxite never shipped
# (irtt's UDP 2112 critical, iperf3's TCP 5201 bulk), in three ways: the plain stack,
# Bauxite with the rate given, and Bauxite with `rate: auto` against `bauxite reflect
# --bind` on the far side. Prints irtt's one-way (send) delay p50/p99/max and iperf3's
# throughput for each. Needs root, iperf3 and irtt (Debian's packages).
#
# Usage: bench/rate-auto/third-party.sh BAUXITE [SECONDS] [TRIALS]
set -euo pipefail
bauxite=$(realpath "$1")
seconds=${2:-30}
trials=${3:-1}
tag="tp$$"
robot="$tag-robot"; link="$tag-link"; base="$tag-base"
out=$(mktemp -d)
cleanup() {
  for ns in "$robot" "$link" "$base"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$out"
}
trap cleanup EXIT
for ns in "$robot" "$link" "$base"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip link add r0 netns "$robot" type veth peer name l0 netns "$link"
ip link add l1 netns "$link" type veth peer name b0 netns "$base"
ip -n "$robot" addr add 10.77.1.1/24 dev r0; ip -n "$link" addr add 10.77.1.2/24 dev l0
ip -n "$link" addr add 10.77.2.1/24 dev l1; ip -n "$base" addr add 10.77.2.2/24 dev b0
for pair in "$robot r0" "$link l0" "$link l1" "$base b0"; do set -- $pair; ip -n "$1" link set "$2" up; done
ip -n "$robot" route add default via 10.77.1.2
ip -n "$base" route add default via 10.77.2.1
ip netns exec "$link" sysctl -qw net.ipv4.ip_forward=1
# The demo's bottleneck: TBF with a 100 KB FIFO and a 5-frame bucket, robot -> base.
ip netns exec "$link" tc qdisc add dev l1 root tbf rate 1500kbit burst 7570 limit 100000
ip netns exec "$base" iperf3 -s -D -1 >/dev/null 2>&1 || true
ip netns exec "$base" irtt server -b 10.77.2.2:2112 >/dev/null 2>&1 &
ip netns exec "$base" "$bauxite" reflect --bind 10.77.2.2 >/dev/null 2>&1 &
cat > "$out/profile.yaml" <<YAML
name: third-party
rate: auto
lanes:
- {name: critical, share: 0.3, drop_when_congested: false, queue_limit: 64}
- {name: bulk, share: 0.7, drop_when_congested: true, queue_limit: 48}
rules:
- {lane: critical, proto: udp, ports: '2112', side: either}
- {lane: bulk, proto: tcp, ports: '5201', side: either}
default_lane: bulk
auto_rate:
  reflector: 10.77.2.2:7399
YAML
sleep 1

run() { # mode -> "p50 p99 max mbps"
  local mode=$1 up_pid=""
  case $mode in
    plain) ;;
    given) ip netns exec "$robot" "$bauxite" up --iface r0 --config "$out/profile.yaml" --rate 1.5mbit >"$out/up.log" 2>&1 & up_pid=$! ;;
    auto) ip netns exec "$robot" "$bauxite" up --iface r0 --config "$out/profile.yaml" >"$out/up.log" 2>&1 & up_pid=$! ;;
  esac
  [ -n "$up_pid" ] && sleep 2
  ip netns exec "$base" iperf3 -s -D -1 >/dev/null 2>&1 || true
  sleep 0.3
  ip netns exec "$robot" irtt client -i 10ms -l 64 -d "${seconds}s" -Q -o "$out/irtt.json" 10.77.2.2:2112 &
  local irtt_pid=$!
  ip netns exec "$robot" iperf3 -c 10.77.2.2 -t "$seconds" -J >"$out/iperf.json" 2>/dev/null || true
  wait "$irtt_pid" || true
  if [ -n "$up_pid" ]; then kill -INT "$up_pid"; wait "$up_pid" || true; fi
  python3 - "$out/irtt.json" "$out/iperf.json" "$seconds" <<'PY'
import json, sys
irtt = json.load(open(sys.argv[1]))
skip = 5e9  # the first 5 s: TCP's slow start, `rate: auto` finding the link
start = irtt["round_trips"][0]["timestamps"]["client"]["send"]["wall"]
delays = sorted(rt["delay"]["send"] / 1e6 for rt in irtt["round_trips"]
                if rt.get("lost") == "false" and "send" in rt.get("delay", {})
                and rt["timestamps"]["client"]["send"]["wall"] - start >= skip)
lost = sum(1 for rt in irtt["round_trips"] if rt.get("lost") in ("true", "true_down"))
q = lambda p: delays[min(len(delays) - 1, int(p * len(delays)))]
try:
    mbps = json.load(open(sys.argv[2]))["end"]["sum_received"]["bits_per_second"] / 1e6
except Exception:
    mbps = float("nan")
print(f"{q(0.5):.2f} {q(0.99):.2f} {delays[-1]:.2f} {mbps:.3f} {lost}")
PY
}

printf "%-6s %5s %10s %10s %10s %12s %6s\n" mode trial "p50 ms" "p99 ms" "max ms" "iperf3 Mbit/s" lost
for trial in $(seq 1 "$trials"); do
  for mode in plain given auto; do
    read -r p50 p99 mx mbps lost < <(run "$mode")
    printf "%-6s %5d %10s %10s %10s %12s %6s\n" "$mode" "$trial" "$p50" "$p99" "$mx" "$mbps" "$lost"
  done
done
