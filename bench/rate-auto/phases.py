#!/usr/bin/env python3
"""Where `rate: auto` left a link's capacity unused, by what its law was doing.

Reads the `timeseries.csv` of `bauxite sim robot` runs (first seed, 100 ms bins, the
`auto_phase` column: the law's phase for most of each bin) and prints, per run and
phase, the share of the run's time spent in it and the share of the link's capacity
the protected phase did not deliver meanwhile (capacity - delivered, per bin, over the
run's whole capacity). The clairvoyant's figures in summary.json say how much of that
no controller could have used.

Usage: phases.py RUNDIR [RUNDIR...]   (e.g. the per-trace directories score.py writes)
"""
import csv
import os
import sys
from collections import defaultdict


def attribute(rundir):
    with open(os.path.join(rundir, "timeseries.csv")) as f:
        rows = list(csv.DictReader(f))
    if not rows or "auto_phase" not in rows[0]:
        sys.exit(f"{rundir}: timeseries.csv has no auto_phase column (a run with rate: auto, by this build?)")
    time, unused = defaultdict(int), defaultdict(float)
    capacity_total = 0.0
    for row in rows:
        if not row["capacity_mbps"]:
            continue
        capacity = float(row["capacity_mbps"])
        phase = row["auto_phase"] or "-"
        capacity_total += capacity
        time[phase] += 1
        unused[phase] += max(0.0, capacity - float(row["protected_delivered_mbps"]))
    return time, unused, capacity_total, len(rows)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for rundir in sys.argv[1:]:
        time, unused, capacity_total, bins = attribute(rundir)
        if capacity_total <= 0:
            print(f"{rundir}: no capacity")
            continue
        total = sum(unused.values()) / capacity_total
        cells = [
            f"{phase} {100 * time[phase] / bins:.0f} % of the time, {100 * unused[phase] / capacity_total:.1f} % unused"
            for phase in sorted(time, key=lambda p: -unused[p])
        ]
        print(f"{os.path.basename(rundir.rstrip('/'))}: {100 * total:.1f} % of the capacity unused; " + "; ".join(cells))


main()
