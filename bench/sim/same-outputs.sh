#!/bin/bash
# Checks that a simulator change left every result as it was: runs the same studies with
# two bauxite builds and compares their files (flows.csv and classes.csv byte for byte,
# summary.md but its event count, summary.json but its event counts, peak_packets and
# wall-clock fields, which describe the simulator's work rather than the network).
#   bench/sim/same-outputs.sh BASELINE NEW
# The studies: the seed's comparison, all 168 runs, 1080 jittered runs over three
# families, the 1000-follower comparison, and four networks built against the engine's
# shortcuts (slow access links, deep device queues, zero delays, equal packet sizes).
set -euo pipefail
base=$1 new=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
norm() { # summary.json without the fields that count the simulator's own work
    python3 -c '
import json, sys
skip = {"wall_s", "events_per_s", "events", "cpu_s", "peak_packets", "run_wall_s_sum"}
def strip(o):
    if isinstance(o, dict): return {k: strip(v) for k, v in o.items() if k not in skip}
    if isinstance(o, list): return [strip(v) for v in o]
    return o
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True, indent=0))' "$1"
}
check() { # name, then the study's flags
    local name=$1; shift
    "$base" sim study "$@" --out "$work/base-$name" > /dev/null 2>&1
    "$new" sim study "$@" --out "$work/new-$name" > /dev/null 2>&1
    local a=$work/base-$name b=$work/new-$name
    cmp -s "$a/flows.csv" "$b/flows.csv" || { echo "$name: flows.csv differs"; exit 1; }
    cmp -s "$a/classes.csv" "$b/classes.csv" || { echo "$name: classes.csv differs"; exit 1; }
    diff -q <(grep -v 'simulated events' "$a/summary.md") <(grep -v 'simulated events' "$b/summary.md") > /dev/null \
        || { echo "$name: summary.md differs"; exit 1; }
    diff -q <(norm "$a/summary.json") <(norm "$b/summary.json") > /dev/null || { echo "$name: summary.json differs"; exit 1; }
    echo "$name: same"
    rm -rf "$a" "$b"
}
check compare --family compare --schedulers fifo,pfifo-fast,prio,fq-pie,fq-codel --jobs 1
check all --jobs 2
check seeds --family compare,load,followers --seeds 10 --jobs 2
check slow-access --family compare --access-mbps 8 --device-queue 3 --access-delay-ms 0 --bottleneck-delay-ms 0 --jobs 2
check equal-sizes --family compare --access-mbps 10 --bg-payload 64 --access-delay-ms 0 --jobs 2
check deep-queues --family compare --access-mbps 12 --device-queue 2 --bg-flows 3 --seeds 3 --jobs 2
check fast-bottleneck --family compare --bottleneck-mbps 200 --bg-mbps 150 --access-mbps 100 --bottleneck-delay-ms 0 --jobs 2
check followers-1000 --family compare --followers 1000 --jobs 2
