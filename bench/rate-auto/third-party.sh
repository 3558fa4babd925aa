#!/usr/bin/env bash
# Issue 27's third-party case: iperf3 (CUBIC) uploading through a constrained link
# beside irtt's 64-byte probes every 10 ms, with a profile Bauxite never shipped
# (irtt's UDP 2112 critical, iperf3's TCP 5201 bulk). Prints irtt's one-way (send)
# delay p50/p99/max, iperf3's throughput and irtt's lost probes for each way of
# running the robot's side:
#   plain  the standard stack;
#   given  Bauxite with the link's rate given (the kernel TBF only, whose rate is known);
#   auto   Bauxite with `rate: auto` against `bauxite reflect --bind` on the far side;
#   cake   Bauxite's same lanes at a rate set by cake-autorate, the real script, instead
#          (only with CAKE_AUTORATE=DIR, a checkout of github.com/lynxthecat/cake-autorate):
#          its `tc qdisc change ... cake bandwidth R` becomes Bauxite's rate R, through a
#          `tc` in front of the real one that rewrites the profile's rate and asks the
#          daemon to re-read it (SIGHUP: the lanes' HTB classes change in place).
#          Its pings go in the critical lane (DSCP CS6, as Bauxite's ICMP probes), 20 a
#          second to the far side; min/base/max from the link (below).
#
# The link: by default a steady 1.5 Mbit/s kernel TBF with a 100 KB FIFO and a 5-frame
# bucket (the demo's bottleneck); LINK=SPEC puts `bauxite link --up SPEC --between` in
# its place (e.g. LINK=trace=FILE.up,queue=100kb), a trace's rates read by `bauxite link
# trace-stats` for cake-autorate's min (p5 of the 1 s rates), base (p50) and max (p95);
# a constant rate= link's rate is its base, and twice it its max.
# The first 5 s of each run are not counted (TCP's slow start, the controllers finding
# the link).
#
# Needs root, iperf3 and irtt (and fping for `cake`): Debian's packages, which
# scripts/install-deps installs.
#
# MODES="auto cake" runs only those.
#
# Usage: [LINK=SPEC] [CAKE_AUTORATE=DIR] [MODES=...] bench/rate-auto/third-party.sh BAUXITE [SECONDS] [TRIALS]
set -euo pipefail
bauxite=$(realpath "$1")
seconds=${2:-30}
trials=${3:-1}
link_spec=${LINK:-}
cake_dir=${CAKE_AUTORATE:+$(realpath "$CAKE_AUTORATE")}
tag="tp$$"
robot="$tag-robot"; link="$tag-link"; base="$tag-base"
out=$(mktemp -d)
link_pid=""
cleanup() {
  [ -n "$link_pid" ] && kill "$link_pid" 2>/dev/null && wait "$link_pid" 2>/dev/null
  for ns in "$robot" "$link" "$base"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$out"
}
trap cleanup EXIT

if [ -z "$link_spec" ]; then
  for ns in "$robot" "$link" "$base"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
  ip link add r0 netns "$robot" type veth peer name l0 netns "$link"
  ip link add l1 netns "$link" type veth peer name b0 netns "$base"
  ip -n "$robot" addr add 10.77.1.1/24 dev r0; ip -n "$link" addr add 10.77.1.2/24 dev l0
  ip -n "$link" addr add 10.77.2.1/24 dev l1; ip -n "$base" addr add 10.77.2.2/24 dev b0
  for pair in "$robot r0" "$link l0" "$link l1" "$base b0"; do set -- $pair; ip -n "$1" link set "$2" up; done
  ip -n "$robot" route add default via 10.77.1.2
  ip -n "$base" route add default via 10.77.2.1
  ip netns exec "$link" sysctl -qw net.ipv4.ip_forward=1
  ip netns exec "$link" tc qdisc add dev l1 root tbf rate 1500kbit burst 7570 limit 100000
  iface=r0; far=10.77.2.2
  modes="plain given auto"
  cake_kbit="300 1500 3000"   # min base max: a guess around the link, up to twice it
else
  for ns in "$robot" "$base"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
  "$bauxite" link --up "$link_spec" --between "$robot" "$base" >"$out/link.log" 2>&1 &
  link_pid=$!
  for _ in $(seq 50); do grep -q "sending the uplink" "$out/link.log" && break; sleep 0.1; done
  far=$(sed -n 's/.* and .* at \([0-9.]*\), .*/\1/p' "$out/link.log")
  iface=$(ip -n "$robot" -o link show | sed -n 's/^[0-9]*: \(bxl-[0-9]*\)@.*/\1/p')
  [ -n "$far" ] && [ -n "$iface" ] || { cat "$out/link.log" >&2; exit 1; }
  modes="plain auto"
  trace=$(tr ',' '\n' <<<"$link_spec" | sed -n 's/^trace=//p')
  if [ -n "$trace" ]; then
    read -r p5 p50 p95 < <("$bauxite" link trace-stats "$trace" |
      sed -n 's/^1 s rates *p5 \([0-9.]*\) *p25 [0-9.]* *p50 \([0-9.]*\) *p75 [0-9.]* *p95 \([0-9.]*\).*/\1 \2 \3/p')
    kbit() { python3 -c "print(max(300, round($1 * 1000)))"; }
    cake_kbit="$(kbit "$p5") $(kbit "$p50") $(kbit "$p95")"
  else
    rate_kbit=$(python3 - "$link_spec" <<'PY'
import re, sys
m = re.search(r"rate=([0-9.]+)(k|m)bit", sys.argv[1])
print(round(float(m.group(1)) * (1000 if m.group(2) == "m" else 1)))
PY
)
    cake_kbit="300 $rate_kbit $((2 * rate_kbit))"   # as for the TBF: up to twice the link
  fi
fi
[ -n "$cake_dir" ] && modes="$modes cake"
modes=${MODES:-$modes}

ip netns exec "$base" irtt server -b "$far:2112" >/dev/null 2>&1 &
ip netns exec "$base" "$bauxite" reflect --bind "$far" >/dev/null 2>&1 &

# The profile the project never shipped; `cake` adds its pings to the critical lane and
# shapes to the rate cake-autorate sets (no headroom of Bauxite's on top of its own).
profile() { # rate -> profile YAML
  cat <<YAML
name: third-party
rate: $1
lanes:
- {name: critical, share: 0.3, drop_when_congested: false, queue_limit: 64}
- {name: bulk, share: 0.7, drop_when_congested: true, queue_limit: 48}
rules:
- {lane: critical, proto: udp, ports: '2112', side: either}
- {lane: bulk, proto: tcp, ports: '5201', side: either}
default_lane: bulk
auto_rate:
  reflector: $far:7399
YAML
}
profile auto >"$out/profile.yaml"

# cake-autorate's side: a copy of the checkout with this run's config, and the `tc` it
# finds first on its PATH.
start_cake() { # sets up_pid and cake_pid
  read -r min_k base_k max_k <<<"$cake_kbit"
  profile "${base_k}kbit" | sed -e '/^rules:/a - {lane: critical, dscp: cs6}' -e '/^auto_rate:/,$d' \
    >"$out/cake-profile.yaml"
  echo "headroom: 1.0" >>"$out/cake-profile.yaml"
  ip netns exec "$robot" "$bauxite" up --iface "$iface" --config "$out/cake-profile.yaml" >"$out/up.log" 2>&1 &
  up_pid=$!
  echo "$up_pid" >"$out/up.pid"
  mkdir -p "$out/shim"
  cat >"$out/shim/tc" <<SHIM
#!/usr/bin/env bash
# cake-autorate's rate change, as Bauxite's: rewrite the profile's rate, SIGHUP the daemon.
line="\$*"
[ "\$line" = "-force -batch -" ] && line=\$(tail -n 1)
if [[ \$line =~ cake\ bandwidth\ ([0-9]+)Kbit ]]; then
  sed -i "s/^rate: .*/rate: \${BASH_REMATCH[1]}kbit/" "$out/cake-profile.yaml"
  kill -HUP "\$(cat "$out/up.pid")"
  echo "\$(date +%s.%N) \${BASH_REMATCH[1]}" >>"$out/cake-rates"
  exit 0
fi
exec $(command -v tc) "\$@"
SHIM
  chmod +x "$out/shim/tc"
  rm -rf "$out/cake"; cp -r "$cake_dir" "$out/cake"
  # Its download interface must differ from the upload's, and is not adjusted here: an
  # idle veth with a 1500-byte MTU (its MTU sets how often cake-autorate reads the rates).
  ip -n "$robot" link show cake-dl >/dev/null 2>&1 ||
    ip -n "$robot" link add cake-dl type veth peer name cake-dl-peer
  cat >"$out/cake/config.bench.sh" <<CFG
dl_if=cake-dl
ul_if=$iface
adjust_dl_shaper_rate=0
adjust_ul_shaper_rate=1
min_dl_shaper_rate_kbps=$min_k
base_dl_shaper_rate_kbps=$base_k
max_dl_shaper_rate_kbps=$max_k
min_ul_shaper_rate_kbps=$min_k
base_ul_shaper_rate_kbps=$base_k
max_ul_shaper_rate_kbps=$max_k
connection_active_thr_kbps=$((min_k / 2))
pinger_method=fping
reflectors=("$far")
no_pingers=1
reflector_ping_interval_s=0.05
randomize_reflectors=0
ping_extra_args="--tos=192"
startup_wait_s=0.0
log_to_file=1
log_file_path_override="$out"
output_summary_stats=1
output_cake_changes=1
CFG
  sleep 1.5
  setsid ip netns exec "$robot" env PATH="$out/shim:$PATH" CAKE_AUTORATE_SCRIPT_PREFIX="$out/cake" \
    bash "$out/cake/cake-autorate.sh" "$out/cake/config.bench.sh" >"$out/cake.out" 2>&1 &
  cake_pid=$!
}

run() { # mode -> "p50 p99 max mbps lost"
  local mode=$1 up_pid="" cake_pid=""
  case $mode in
    plain) ;;
    given) ip netns exec "$robot" "$bauxite" up --iface "$iface" --config "$out/profile.yaml" --rate 1.5mbit >"$out/up.log" 2>&1 & up_pid=$! ;;
    auto) ip netns exec "$robot" "$bauxite" up --iface "$iface" --config "$out/profile.yaml" >"$out/up.log" 2>&1 & up_pid=$! ;;
    cake) start_cake ;;
  esac
  [ -n "$up_pid" ] && sleep 2
  ip netns exec "$base" iperf3 -s -D -1 >/dev/null 2>&1 || true
  sleep 0.3
  ip netns exec "$robot" irtt client -i 10ms -l 64 -d "${seconds}s" -Q -o "$out/irtt.json" "$far:2112" &
  local irtt_pid=$!
  ip netns exec "$robot" iperf3 -c "$far" -t "$seconds" -J >"$out/iperf.json" 2>/dev/null || true
  wait "$irtt_pid" || true
  if [ -n "$cake_pid" ]; then kill -TERM "$cake_pid" 2>/dev/null || true; wait "$cake_pid" || true; fi
  if [ -n "$up_pid" ]; then kill -INT "$up_pid"; wait "$up_pid" || true; fi
  [ -n "${KEEP:-}" ] && cp -r "$out" "$KEEP-$mode"
  python3 - "$out/irtt.json" "$out/iperf.json" "$seconds" <<'PY'
import json, sys
irtt = json.load(open(sys.argv[1]))
skip = 5e9  # the first 5 s: TCP's slow start, the controllers finding the link
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
  for mode in $modes; do
    read -r p50 p99 mx mbps lost < <(run "$mode")
    printf "%-6s %5d %10s %10s %10s %12s %6s\n" "$mode" "$trial" "$p50" "$p99" "$mx" "$mbps" "$lost"
  done
done
