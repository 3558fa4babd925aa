#!/bin/bash
# Does `bauxite sim run` agree with ns-3.37 beyond the seed's comparison? Runs the
# same points of three study families in both and prints a markdown table of the
# control class's mean delay and loss side by side (and the status class's delay for
# the access family, the TCP throughput for tcp-cross), then both sides' CPU time.
#   apt-get install libns3-dev g++ pkg-config      # ns-3.37 on Debian 12
#   bench/ns3/agree.sh [BAUXITE]                    # default target/release/bauxite
# Environment: DURATION (simulated seconds, default 20, the studies'), KEEP=DIR (keep
# every run's output there; otherwise it goes with the temporary directory).
#
# The points (DSCP on throughout, as the studies' interesting half):
#   access     followers' access links at 1, 10, 100 Mbit/s      x fifo, fq-codel
#   burst      background in 10 ms and 1000 ms on/off bursts     x fifo, fq-codel
#   tcp-cross  1 and 4 TCP CUBIC flows each way, 6 Mbit/s UDP    x fifo, prio, fq-codel
# Both sides get bauxite's access queue (a 1000-packet drop-tail FIFO on every access
# link, ns-3's --accessQueue=1000) rather than ns-3's default FQ-CoDel, which would
# isolate the followers' classes on a slow access link. qos_compare.cc says how the
# rest of each family is modelled in ns-3 and where it differs.
#
# Agreement: a delay within 10 % of ns-3's or within 1 ms, a loss within 5 percentage
# points. Both sides' figures mean the same: loss is the class's lost over sent packets
# (ns-3's FlowMonitor; bauxite's classes.csv), delay the class's delay sum over its
# received packets (qos_compare.cc's per-port lines; bauxite's flows.csv, each flow's
# mean delay weighted by its received packets). classes.csv's delay_ms is the mean of
# the flows' means instead, which is not the same figure where the flows lose unevenly:
# under FIFO one follower's status flow gets 316 packets through at 52 ms and the
# others 6-9 at 22-29 ms, 50 ms one way and 32 ms the other. The table's footnotes name
# the points where that matters. The TCP throughput (both directions' connections
# together: received IP bytes over the 19 s they send) is shown, not judged.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bauxite=${1:-$here/../../target/release/bauxite}
duration=${DURATION:-20}
TIMEFORMAT='%3U %3S'
if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    work=$(cd "$KEEP" && pwd)
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
[ -x "$bauxite" ] || { echo "no bauxite binary at $bauxite" >&2; exit 2; }
pkg-config --exists ns3-core || { echo "ns-3 not found: apt-get install libns3-dev g++ pkg-config" >&2; exit 2; }
# As run.sh: pkg-config's ns3 files name libgsl.so, which only libgsl-dev installs;
# the program needs none of GSL, so the libraries are named here.
g++ -O2 -std=c++17 "$here/qos_compare.cc" -o "$work/qos_compare" $(pkg-config --cflags ns3-core) \
    -lns3-flow-monitor -lns3-applications -lns3-point-to-point -lns3-internet \
    -lns3-traffic-control -lns3-network -lns3-stats -lns3-bridge -lns3-core

# One point a line: family|scheduler|value|ns-3 flags|bauxite flags.
points=()
for v in 1 10 100; do
    for s in fifo fq-codel; do
        points+=("access|$s|$v|--followerAccessMbps=$v|--follower-access-mbps $v")
    done
done
for v in 10 1000; do
    for s in fifo fq-codel; do
        points+=("burst|$s|$v|--bgBurstMs=$v|--bg-burst $v")
    done
done
# The tcp-cross family halves the study's 12 Mbit/s UDP background.
for v in 1 4; do
    for s in fifo prio fq-codel; do
        points+=("tcp-cross|$s|$v|--tcpFlows=$v --bgMbps=6|--tcp-flows $v --bg-mbps 6")
    done
done

: > "$work/points"
i=0
for p in "${points[@]}"; do
    IFS='|' read -r family s v ns3_flags bx_flags <<< "$p"
    i=$((i + 1))
    echo "[$i/${#points[@]}] $family $s $v" >&2
    # Whole processes' user + system CPU seconds, on both sides, to the millisecond
    # (bash's `time`: a bauxite run takes a few hundredths, /usr/bin/time's resolution).
    # shellcheck disable=SC2086 # the flags are words
    { time "$work/qos_compare" --scheduler="$s" --dscp=1 --accessQueue=1000 --duration="$duration" \
        $ns3_flags > "$work/$i.ns3" 2> "$work/$i.ns3.err"; } 2> "$work/$i.ns3.time"
    rm -rf "$work/$i.bx"
    # shellcheck disable=SC2086
    { time "$bauxite" sim run --scheduler "$s" --dscp on --duration "$duration" $bx_flags \
        --out "$work/$i.bx" > "$work/$i.bx.log" 2>&1; } 2> "$work/$i.bx.time"
    echo "$i|$family|$s|$v" >> "$work/points"
done

python3 - "$work" <<'EOF'
import csv, re, sys
from pathlib import Path

work = Path(sys.argv[1])
DELAY_REL, DELAY_ABS, LOSS_PP = 0.10, 1.0, 5.0
UNIT = {"access": "Mbit/s", "burst": "ms", "tcp-cross": "flows/dir"}
CONTROL, STATUS = 5000, 5001


def ns3(i):
    """ns-3's per-port (delay ms, loss %) and the TCP data line's throughput."""
    ports, tcp = {}, None
    for line in (work / f"{i}.ns3").read_text().splitlines():
        m = re.match(r"\S+ dscp=\d port (\d+): delay (\S+) ms, loss (\S+) %$", line)
        if m:
            ports[int(m[1])] = (float(m[2]), float(m[3]))
        m = re.match(r"\S+ dscp=\d tcp port \d+: .* throughput (\S+) Mbit/s", line)
        if m:
            tcp = float(m[1])
    return ports, tcp


def bauxite(i):
    """bauxite's classes.csv rows by class name, and each class's delay weighted by
    packets received from flows.csv (ns-3's definition: the delay sum over received)."""
    with open(work / f"{i}.bx" / "classes.csv") as f:
        rows = {row["class"]: row for row in csv.DictReader(f)}
    sums = {}
    with open(work / f"{i}.bx" / "flows.csv") as f:
        for flow in csv.DictReader(f):
            rx = int(flow["rx_packets"])
            if rx:
                d, n = sums.get(flow["class"], (0.0, 0))
                sums[flow["class"]] = (d + float(flow["delay_ms"]) * rx, n + rx)
    return rows, {c: d / n for c, (d, n) in sums.items()}


def cpu(path):
    user, system = path.read_text().split()[-2:]
    return float(user) + float(system)


def delay_ok(n, b):
    return abs(n - b) <= max(DELAY_ABS, DELAY_REL * n)


def f(x, d=2):
    return "–" if x is None else f"{x:.{d}f}"


print("| family | scheduler | dscp | value | control delay ms ns-3 | bauxite | control loss % ns-3 | bauxite "
      "| status delay ms ns-3 | bauxite | TCP Mbit/s ns-3 | bauxite | agree |")
print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
agree = total = 0
ns3_cpu = bx_cpu = bx_sim_cpu = 0.0
warnings, notes = [], []
for line in (work / "points").read_text().splitlines():
    i, family, sched, value = line.split("|")
    ports, ns_tcp = ns3(i)
    rows, delay = bauxite(i)
    nd, nl = ports[CONTROL]
    bd, bl = delay["control"], float(rows["control"]["loss_pct"])
    bad = []
    if not delay_ok(nd, bd):
        bad.append("delay")
    if abs(nl - bl) > LOSS_PP:
        bad.append("loss")
    ns_status = bx_status = None
    if family == "access":  # status goes follower -> orchestrator, over the slow link
        ns_status, bx_status = ports[STATUS][0], delay["status"]
        if not delay_ok(ns_status, bx_status):
            bad.append("status delay")
    for c, shown in (("control", bd), ("status", bx_status)):
        flow_mean = float(rows[c]["delay_ms"])
        if shown is not None and not delay_ok(shown, flow_mean):
            notes.append(f"{family} {sched} {value}: bauxite's {c} delay is {shown:.2f} ms over its packets, "
                         f"classes.csv's mean of flow means {flow_mean:.2f} ms")
    bx_tcp = None
    if family == "tcp-cross":
        bx_tcp = float(rows["background"]["tcp_throughput_mbps"])
    total += 1
    agree += not bad
    print(f"| {family} | {sched} | on | {value} {UNIT[family]} | {f(nd)} | {f(bd)} | {f(nl, 1)} | {f(bl, 1)} "
          f"| {f(ns_status)} | {f(bx_status)} | {f(ns_tcp)} | {f(bx_tcp)} | {'no: ' + ', '.join(bad) if bad else 'yes'} |")
    ns3_cpu += cpu(work / f"{i}.ns3.time")
    bx_cpu += cpu(work / f"{i}.bx.time")
    m = re.search(r"\(([\d.]+) CPU-s\)", (work / f"{i}.bx.log").read_text())
    bx_sim_cpu += float(m[1]) if m else 0.0
    err = (work / f"{i}.ns3.err").read_text().strip()
    if err:
        warnings.append(f"{family} {sched} {value}: {err}")

print(f"\n{agree} of {total} points agree (delay within {DELAY_REL:.0%} or {DELAY_ABS:g} ms, loss within "
      f"{LOSS_PP:g} points).")
print(f"CPU, whole processes: ns-3.37 {ns3_cpu:.2f} s, bauxite {bx_cpu:.3f} s ({ns3_cpu / bx_cpu:.0f}x); "
      f"bauxite's simulations alone {bx_sim_cpu:.3f} CPU-s.")
for n in notes:
    print(f"- {n}")
for w in warnings:
    print(f"- ns-3 said: {w}")
EOF
