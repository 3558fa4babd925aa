#!/bin/bash
# CPU seconds of ns-3.37 (Debian's libns3-dev) and of `bauxite sim study` on the
# seed's 10 comparison scenarios (5 schedulers x DSCP off/on), in one run, so the
# ratio holds on whatever machine and load this runs on (CPU time, not wall).
#   apt-get install libns3-dev g++ pkg-config      # ns-3.37 on Debian 12
#   bench/ns3/run.sh [BAUXITE [BASELINE]]           # default target/release/bauxite
# BASELINE, another bauxite build (one that prints CPU-s), is timed in the same run.
# Each bauxite study runs 3 times; the median CPU-s counts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bauxite=${1:-$here/../../target/release/bauxite}
baseline=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# pkg-config's ns3 files name libgsl.so, which only libgsl-dev installs; the
# program needs none of GSL, so the libraries are named here.
g++ -O2 -std=c++17 "$here/qos_compare.cc" -o "$work/qos_compare" $(pkg-config --cflags ns3-core) \
    -lns3-flow-monitor -lns3-applications -lns3-point-to-point -lns3-internet \
    -lns3-traffic-control -lns3-network -lns3-stats -lns3-bridge -lns3-core
ticks=$(getconf CLK_TCK)
ns3_ticks=0
for s in fifo pfifo-fast prio fq-pie fq-codel; do
    for d in 0 1; do
        /usr/bin/time -f "%U %S" -o "$work/t" "$work/qos_compare" --scheduler=$s --dscp=$d > "$work/$s-$d.txt"
        read -r u sy < "$work/t"
        grep 'port 5000' "$work/$s-$d.txt"
        ns3_ticks=$(python3 -c "print($ns3_ticks + round(($u + $sy) * $ticks))")
    done
done
ns3_s=$(python3 -c "print($ns3_ticks / $ticks)")
study_cpu() { # median CPU-s of 3 runs of the comparison study by bauxite binary $1
    for _ in 1 2 3; do
        "$1" sim study --family compare --schedulers fifo,pfifo-fast,prio,fq-pie,fq-codel --jobs 1 \
            --out "$work/bauxite" 2>/dev/null | grep '^simulated' | sed -E 's/.*\(([0-9.]+) CPU-s\).*/\1/'
        rm -rf "$work/bauxite"
    done | sort -n | sed -n 2p
}
bx_s=$(study_cpu "$bauxite")
python3 -c "print(f'ns-3.37: {$ns3_s:.2f} CPU-s, bauxite: {$bx_s:.3f} CPU-s, ratio {$ns3_s / $bx_s:.0f}x')"
if [ -n "$baseline" ]; then
    base_s=$(study_cpu "$baseline")
    python3 -c "print(f'baseline bauxite: {$base_s:.3f} CPU-s, ratio to ns-3 {$ns3_s / $base_s:.0f}x; speed-up {$base_s / $bx_s:.2f}x')"
fi
